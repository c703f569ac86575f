import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { AdmissionController } from './admission.js';
import { OverloadMetrics } from './overload.metrics.js';

/** Closes the admission queue's timer with the app. */
class AdmissionLifecycle implements OnApplicationShutdown {
  constructor(@Inject(AdmissionController) private readonly admission: AdmissionController) {}

  onApplicationShutdown(): void {
    this.admission.close();
  }
}

/**
 * Admission control (docs/overload.md): one controller per process, shared by the HTTP server
 * (configureApp puts it in front of Express) and the gRPC server (AppGrpcServer).
 */
@Global()
@Module({
  providers: [
    {
      provide: AdmissionController,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new AdmissionController(config.overload),
    },
    OverloadMetrics,
    AdmissionLifecycle,
  ],
  exports: [AdmissionController, OverloadMetrics],
})
export class OverloadModule {}
