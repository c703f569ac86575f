import { Module } from '@nestjs/common';
import { GroupsModule } from '../groups/groups.module.js';
import { UsersModule } from '../users/users.module.js';
import { ScimAuthGuard } from './scim-auth.guard.js';
import {
  ScimDiscoveryController,
  ScimGroupsController,
  ScimRootSearchController,
  ScimUsersController,
} from './scim.controller.js';
import { ScimGroupsService } from './scim-groups.service.js';
import { ScimUsersService } from './scim-users.service.js';

/** SCIM 2.0 provisioning at /scim/v2 (docs/provisioning.md), over UsersService and groups. */
@Module({
  imports: [UsersModule, GroupsModule],
  // The discovery controller last: its catch-all route must come after every other SCIM route.
  controllers: [
    ScimUsersController,
    ScimGroupsController,
    ScimRootSearchController,
    ScimDiscoveryController,
  ],
  providers: [ScimUsersService, ScimGroupsService, ScimAuthGuard],
})
export class ScimModule {}
