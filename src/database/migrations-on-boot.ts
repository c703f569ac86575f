import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { runMigrations } from './migrations.js';

/**
 * MIGRATE_ON_BOOT: applies pending migrations before the service listens. It runs here, after
 * the connection is made, rather than in DataSource.initialize (TypeORM's migrationsRun): there a
 * failing migration would be retried and logged as "Unable to connect to the database".
 */
@Injectable()
export class MigrationsOnBoot implements OnModuleInit {
  private readonly logger = new Logger('Migrations');

  constructor(
    private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.config.database.migrateOnBoot) return;
    try {
      const applied = await runMigrations(this.dataSource);
      if (applied.length > 0) {
        this.logger.log(`applied ${applied.map((m) => m.name).join(', ')}`);
      }
    } catch (error) {
      this.logger.error({ err: error, msg: 'migration failed' });
      throw error;
    }
  }
}
