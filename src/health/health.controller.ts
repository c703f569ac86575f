import { Controller, Get, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/auth.decorators.js';
import { HealthService, type Readiness } from './health.service.js';

class LivenessDto {
  @ApiProperty({ example: true })
  ok: boolean;
}

class ReadinessDto extends LivenessDto {
  @ApiProperty({ enum: ['up', 'down'] })
  database: 'up' | 'down';

  @ApiProperty()
  shuttingDown: boolean;

  @ApiPropertyOptional({
    enum: ['pending'],
    description: 'present while a migration this build needs is not applied to the database yet',
  })
  migrations?: 'pending';

  @ApiPropertyOptional({
    enum: ['serving'],
    description:
      'present while the primary is down and a read replica serves the lists: ready for them, while writes and reads by id answer 503',
  })
  replicas?: 'serving';
}

@ApiTags('operations')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly healthService: HealthService) {}

  /** Liveness: answers while the process serves, without touching the database. */
  @Get()
  @ApiOperation({ summary: 'Liveness probe' })
  @ApiOkResponse({ type: LivenessDto, description: 'the process serves (liveness)' })
  live(): { ok: true } {
    return { ok: true };
  }

  /**
   * Readiness: 200 while the database answers with every migration of this build applied and
   * shutdown has not begun (with read replicas, also while the primary is down and a replica
   * serves the lists), else 503.
   */
  @Get('ready')
  @ApiOperation({ summary: 'Readiness probe' })
  @ApiOkResponse({ type: ReadinessDto, description: 'ready: the database answers' })
  @ApiServiceUnavailableResponse({
    type: ReadinessDto,
    description:
      'not ready: the database does not answer or lacks a migration, or shutdown has begun',
  })
  async ready(@Res({ passthrough: true }) response: Response): Promise<Readiness> {
    const readiness = await this.healthService.readiness();
    response.status(readiness.ok ? 200 : 503);
    return readiness;
  }
}
