import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { MetricsService } from './metrics.service.js';

@ApiTags('operations')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metricsService: MetricsService) {}

  /** Prometheus text exposition format. */
  @Get()
  @ApiOperation({ summary: 'Prometheus metrics' })
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus metrics (text exposition format 0.0.4)' })
  metrics(): Promise<string> {
    return this.metricsService.registry.metrics();
  }
}
