import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequiredScope } from '../auth/auth.decorators.js';
import { ClientGone } from '../http/client-gone.js';
import { ApiErrors } from '../http/openapi.decorators.js';
import { ChangesService } from './changes.service.js';
import { ChangesPageDto } from './dto/changes-page.dto.js';
import { ListChangesQueryDto } from './dto/list-changes-query.dto.js';

/**
 * `GET /users/changes`: the change feed (docs/events.md). Its module is imported before
 * UsersModule (app.module.ts), so this route is matched before `GET /users/:id`.
 */
@ApiTags('users')
@Controller('users/changes')
export class ChangesController {
  constructor(private readonly changes: ChangesService) {}

  @Get()
  @RequiredScope('users:read')
  @ApiOperation({
    summary: 'Follow the changes of users',
    description:
      'CloudEvents 1.0 JSON events in feed order (per user, increasing version), after a token; with `wait`, an empty page waits for the first new event (long poll). Delivery is at least once: dedupe by user and version (the event id). docs/events.md',
  })
  @ApiOkResponse({ type: ChangesPageDto })
  @ApiErrors(400, 410, 503)
  async findAll(
    @Query() query: ListChangesQueryDto,
    @ClientGone() gone: AbortSignal,
  ): Promise<ChangesPageDto> {
    return ChangesPageDto.from(
      await this.changes.page(query.after || undefined, query.limit, query.wait * 1000, gone),
    );
  }
}
