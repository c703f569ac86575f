import { Global, Module } from '@nestjs/common';
import { AppConfig, loadEnv } from './app-config.js';

/**
 * Provides the typed AppConfig to every module. Its factory validates the environment once, while
 * the application is being created, so a bad variable stops the boot with a message naming it.
 * Tests replace it with `.overrideProvider(AppConfig).useValue(…)`.
 */
@Global()
@Module({
  providers: [{ provide: AppConfig, useFactory: () => AppConfig.fromEnv(loadEnv()) }],
  exports: [AppConfig],
})
export class AppConfigModule {}
