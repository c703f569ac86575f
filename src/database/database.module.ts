import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './database-options.js';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...dataSourceOptions(config.database),
        retryAttempts: config.database.retryAttempts,
        retryDelay: 1000,
      }),
    }),
  ],
})
export class DatabaseModule {}
