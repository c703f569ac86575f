import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './database-options.js';
import { DatabaseServer, DatabaseServerModule } from './database-server.js';
import { MigrationsOnBoot } from './migrations-on-boot.js';
import { PrimaryStatus } from './primary-status.js';
import { PrimaryPool } from './queryable.js';
import { ReadReplicas } from './read-replicas.js';
import { TransactionScope } from './transaction-scope.js';

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      imports: [DatabaseServerModule],
      inject: [AppConfig, DatabaseServer],
      useFactory: (config: AppConfig, server: DatabaseServer) => ({
        ...dataSourceOptions({ ...config.database, url: server.url }),
        // Each feature module registers its entities (TypeOrmModule.forFeature).
        autoLoadEntities: true,
        retryAttempts: config.database.retryAttempts,
        retryDelay: 1000,
        // Each retry line says why the attempt failed (a connection error's message: no data).
        verboseRetryLog: true,
      }),
    }),
  ],
  providers: [MigrationsOnBoot, PrimaryPool, PrimaryStatus, ReadReplicas, TransactionScope],
  exports: [PrimaryPool, PrimaryStatus, ReadReplicas, TransactionScope],
})
export class DatabaseModule {}
