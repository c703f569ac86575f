import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { User } from '../users/user.entity.js';
import { GroupMember } from './group-member.entity.js';
import { Group } from './group.entity.js';
import { GroupsRepository } from './groups.repository.js';

/** Groups of users and their members (provisioned over SCIM: src/scim). */
@Module({
  imports: [TypeOrmModule.forFeature([Group, GroupMember, User])],
  providers: [GroupsRepository],
  exports: [GroupsRepository],
})
export class GroupsModule {}
