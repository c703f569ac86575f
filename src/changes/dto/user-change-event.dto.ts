import { ApiProperty } from '@nestjs/swagger';
import { ApiIdProperty } from '../../http/openapi.decorators.js';
import { USER_CHANGE_TYPES, type UserChange, type UserChangeType } from '../user-change.entity.js';

/** CloudEvents `source` of every event: the service. */
export const EVENT_SOURCE = '/users-service';

const typeOf = (type: UserChangeType) => `users.user.${type}.v1`;

/** The event's `data`: which user, its version after the change, and what changed. */
export class UserChangeDataDto {
  @ApiIdProperty('the user', 7)
  id: number;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    example: 3,
    description:
      "the user's version after the change (its ETag's); a deletion's is the last version plus one",
  })
  version: number;

  @ApiProperty({
    type: [String],
    example: ['name'],
    description:
      'the properties whose values changed (names only, never values); every property for created, none for deleted',
  })
  changed: string[];
}

/** One change of one user, as a CloudEvents 1.0 JSON object. */
export class UserChangeEventDto {
  @ApiProperty({ enum: ['1.0'] })
  specversion: '1.0';

  @ApiProperty({
    example: '7.3',
    description:
      'unique per event: `<user id>.<version>`; the same change delivered twice has the same id',
  })
  id: string;

  @ApiProperty({ enum: [EVENT_SOURCE] })
  source: string;

  @ApiProperty({ enum: USER_CHANGE_TYPES.map(typeOf) })
  type: string;

  @ApiProperty({ example: '7', description: 'the user id, as a string' })
  subject: string;

  @ApiProperty({ format: 'date-time', description: "when the change's transaction began" })
  time: string;

  @ApiProperty({
    example: '0000000003',
    pattern: '^[0-9]{10}$',
    description: 'the version, zero-padded to 10 digits (orders one user’s events as text)',
  })
  sequence: string;

  @ApiProperty({ enum: ['application/json'] })
  datacontenttype: 'application/json';

  @ApiProperty({ type: UserChangeDataDto })
  data: UserChangeDataDto;

  static from(change: UserChange): UserChangeEventDto {
    const event = new UserChangeEventDto();
    event.specversion = '1.0';
    event.id = `${change.userId}.${change.version}`;
    event.source = EVENT_SOURCE;
    event.type = typeOf(change.type);
    event.subject = String(change.userId);
    event.time = change.at.toISOString();
    event.sequence = String(change.version).padStart(10, '0');
    event.datacontenttype = 'application/json';
    event.data = { id: change.userId, version: change.version, changed: change.changed };
    return event;
  }
}
