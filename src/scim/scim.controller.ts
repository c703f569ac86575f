import {
  All,
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Put,
  Query,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { AUTH_REQUIREMENT, type AuthRequirement, SCIM_SCOPE } from '../auth/scopes.js';
import { NotFoundError } from '../common/errors.js';
import type { IfMatch } from '../users/users.service.js';
import { ScimAuthGuard } from './scim-auth.guard.js';
import { DISCOVERY } from './scim-discovery.js';
import { invalidValue } from './scim-error.js';
import { scimListQuery } from './scim-list-query.js';
import { ScimIfMatch, ScimResponse } from './scim-response.js';
import { LIST_RESPONSE, SEARCH_REQUEST } from './scim-schema.js';
import { ScimUsersService } from './scim-users.service.js';

/**
 * A SCIM controller: callers checked by ScimAuthGuard (scope `scim`; errors in SCIM's schema come
 * from the app's filter, ScimExceptionFilter), and no place in the REST OpenAPI
 * document (docs/provisioning.md describes SCIM; /scim/v2/Schemas describes it to clients).
 */
const ScimController = () =>
  applyDecorators(
    ApiExcludeController(),
    Controller('scim/v2'),
    UseGuards(ScimAuthGuard),
    SetMetadata(AUTH_REQUIREMENT, { kind: 'scope', scope: SCIM_SCOPE } satisfies AuthRequirement),
  );

type QueryParameters = Record<string, unknown>;

/** A SearchRequest body (POST /.search): its parameters, as a GET would take them. */
function searchRequest(body: unknown): QueryParameters {
  const request = body as { schemas?: unknown } | null;
  if (!Array.isArray(request?.schemas) || !request.schemas.includes(SEARCH_REQUEST)) {
    throw invalidValue(`schemas must be ["${SEARCH_REQUEST}"]`);
  }
  return request;
}

@ScimController()
export class ScimUsersController {
  constructor(private readonly scimUsers: ScimUsersService) {}

  @Get('Users')
  @ScimResponse()
  findAll(@Query() query: QueryParameters) {
    return this.scimUsers.findAll(scimListQuery(query));
  }

  @Post(['Users/.search', '.search'])
  @HttpCode(HttpStatus.OK)
  @ScimResponse()
  search(@Body() body: unknown) {
    return this.scimUsers.findAll(scimListQuery(searchRequest(body)));
  }

  @Get('Users/:id')
  @ScimResponse()
  findOne(@Param('id') id: string, @Query() query: QueryParameters) {
    const { attributes, excludedAttributes } = scimListQuery(query);
    return this.scimUsers.findOne(id, { attributes, excludedAttributes });
  }

  @Post('Users')
  @ScimResponse({ created: true })
  create(@Body() body: unknown) {
    return this.scimUsers.create(body);
  }

  @Put('Users/:id')
  @ScimResponse()
  replace(@Param('id') id: string, @Body() body: unknown, @ScimIfMatch() ifMatch?: IfMatch) {
    return this.scimUsers.replace(id, body, ifMatch);
  }

  @Patch('Users/:id')
  @ScimResponse()
  patch(@Param('id') id: string, @Body() body: unknown, @ScimIfMatch() ifMatch?: IfMatch) {
    return this.scimUsers.patch(id, body, ifMatch);
  }

  @Delete('Users/:id')
  @HttpCode(HttpStatus.NO_CONTENT)
  remove(@Param('id') id: string, @ScimIfMatch() ifMatch?: IfMatch): Promise<void> {
    return this.scimUsers.remove(id, ifMatch);
  }
}

/** Discovery (RFC 7644 §4), generated from the schema description; and SCIM's own 404. */
@ScimController()
export class ScimDiscoveryController {
  @Get('ServiceProviderConfig')
  @ScimResponse()
  serviceProviderConfig() {
    return DISCOVERY.serviceProviderConfig;
  }

  @Get('ResourceTypes')
  @ScimResponse()
  resourceTypes() {
    return listOf(DISCOVERY.resourceTypes);
  }

  @Get('ResourceTypes/:id')
  @ScimResponse()
  resourceType(@Param('id') id: string) {
    return oneOf(DISCOVERY.resourceTypes, id, 'ResourceType');
  }

  @Get('Schemas')
  @ScimResponse()
  schemas() {
    return listOf(DISCOVERY.schemas);
  }

  @Get('Schemas/:id')
  @ScimResponse()
  schema(@Param('id') id: string) {
    return oneOf(DISCOVERY.schemas, id, 'Schema');
  }

  /** Any other path under /scim/v2: a SCIM 404, not the REST one. */
  @All('*path')
  unknown(): never {
    throw new NotFoundError('no SCIM resource at this path');
  }
}

function listOf(resources: object[]) {
  return {
    schemas: [LIST_RESPONSE],
    totalResults: resources.length,
    startIndex: 1,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

function oneOf<T extends { id: string }>(resources: T[], id: string, type: string): T {
  const found = resources.find((resource) => resource.id === id);
  if (!found) throw new NotFoundError(`${type} ${id} not found`);
  return found;
}
