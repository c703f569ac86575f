import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { HealthService, type Readiness } from './health.service.js';

@Controller('health')
export class HealthController {
  constructor(private readonly healthService: HealthService) {}

  /** Liveness: answers while the process serves, without touching the database. */
  @Get()
  live(): { ok: true } {
    return { ok: true };
  }

  /** Readiness: 200 while the database answers and shutdown has not begun, else 503. */
  @Get('ready')
  async ready(@Res({ passthrough: true }) response: Response): Promise<Readiness> {
    const readiness = await this.healthService.readiness();
    response.status(readiness.ok ? 200 : 503);
    return readiness;
  }
}
