import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { ScimAuthGuard } from './scim-auth.guard.js';
import { ScimDiscoveryController, ScimUsersController } from './scim.controller.js';
import { ScimUsersService } from './scim-users.service.js';

/** SCIM 2.0 provisioning at /scim/v2 (docs/provisioning.md), over UsersService. */
@Module({
  imports: [UsersModule],
  // The discovery controller last: its catch-all route must come after every other SCIM route.
  controllers: [ScimUsersController, ScimDiscoveryController],
  providers: [ScimUsersService, ScimAuthGuard],
})
export class ScimModule {}
