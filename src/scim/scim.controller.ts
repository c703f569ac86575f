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
import { invalidValue, ScimError } from './scim-error.js';
import { ScimGroupsService } from './scim-groups.service.js';
import { scimListQuery } from './scim-list-query.js';
import { asksForAttributes, ScimIfMatch, ScimResponse } from './scim-response.js';
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

  @Post('Users/.search')
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

@ScimController()
export class ScimGroupsController {
  constructor(private readonly scimGroups: ScimGroupsService) {}

  @Get('Groups')
  @ScimResponse()
  findAll(@Query() query: QueryParameters) {
    return this.scimGroups.findAll(scimListQuery(query));
  }

  @Post('Groups/.search')
  @HttpCode(HttpStatus.OK)
  @ScimResponse()
  search(@Body() body: unknown) {
    return this.scimGroups.findAll(scimListQuery(searchRequest(body)));
  }

  @Get('Groups/:id')
  @ScimResponse()
  findOne(@Param('id') id: string, @Query() query: QueryParameters) {
    const { attributes, excludedAttributes } = scimListQuery(query);
    return this.scimGroups.findOne(id, { attributes, excludedAttributes });
  }

  @Post('Groups')
  @ScimResponse({ created: true })
  create(@Body() body: unknown) {
    return this.scimGroups.create(body);
  }

  @Put('Groups/:id')
  @ScimResponse()
  replace(@Param('id') id: string, @Body() body: unknown, @ScimIfMatch() ifMatch?: IfMatch) {
    return this.scimGroups.replace(id, body, ifMatch);
  }

  @Patch('Groups/:id')
  @ScimResponse({ noContent: true })
  patch(
    @Param('id') id: string,
    @Body() body: unknown,
    @Query() query: QueryParameters,
    @ScimIfMatch() ifMatch?: IfMatch,
  ) {
    // Without attributes asked for, the answer is 204: the members are not read.
    const { attributes, excludedAttributes } = asksForAttributes(query)
      ? scimListQuery(query)
      : { attributes: undefined, excludedAttributes: 'members' };
    return this.scimGroups.patch(id, body, ifMatch, { attributes, excludedAttributes });
  }

  @Delete('Groups/:id')
  @HttpCode(HttpStatus.NO_CONTENT)
  remove(@Param('id') id: string, @ScimIfMatch() ifMatch?: IfMatch): Promise<void> {
    return this.scimGroups.remove(id, ifMatch);
  }
}

/**
 * A search of the root (RFC 7644 §3.4.3): users, then groups, each filtered and sorted as its
 * own endpoint would; a filter, sort or attribute one of the two types does not declare leaves
 * that type out (it matches none there), and is a 400 only when neither declares it.
 */
@ScimController()
export class ScimRootSearchController {
  constructor(
    private readonly scimUsers: ScimUsersService,
    private readonly scimGroups: ScimGroupsService,
  ) {}

  @Post('.search')
  @HttpCode(HttpStatus.OK)
  @ScimResponse()
  async search(@Body() body: unknown) {
    const query = scimListQuery(searchRequest(body));
    // Totals first (count 0), then each type's share of the page.
    const [users, groups] = await Promise.all([
      settle(() => this.scimUsers.findAll({ ...query, startIndex: 1, count: 0 })),
      settle(() => this.scimGroups.findAll({ ...query, startIndex: 1, count: 0 })),
    ]);
    if (users.error && groups.error) throw users.error;
    const userTotal = (users.value?.totalResults as number | undefined) ?? 0;
    const groupTotal = (groups.value?.totalResults as number | undefined) ?? 0;
    const skip = query.startIndex - 1;
    const userCount = Math.max(0, Math.min(query.count, userTotal - skip));
    const groupSkip = Math.max(0, skip - userTotal);
    const groupCount = Math.min(query.count - userCount, Math.max(0, groupTotal - groupSkip));
    const resources = [
      ...(userCount > 0
        ? await this.page(this.scimUsers.findAll({ ...query, count: userCount }))
        : []),
      ...(groupCount > 0
        ? await this.page(
            this.scimGroups.findAll({ ...query, startIndex: groupSkip + 1, count: groupCount }),
          )
        : []),
    ];
    return {
      schemas: [LIST_RESPONSE],
      totalResults: userTotal + groupTotal,
      startIndex: query.startIndex,
      itemsPerPage: resources.length,
      Resources: resources,
    };
  }

  private async page(list: Promise<Record<string, unknown>>): Promise<unknown[]> {
    return (await list).Resources as unknown[];
  }
}

/** The value of `work`, or the SCIM 400 it refused the query with. */
async function settle<T>(work: () => Promise<T>): Promise<{ value?: T; error?: ScimError }> {
  try {
    return { value: await work() };
  } catch (error) {
    if (error instanceof ScimError && error.status === 400) return { error };
    throw error;
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
