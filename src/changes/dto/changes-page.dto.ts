import { ApiProperty } from '@nestjs/swagger';
import type { ChangesPage } from '../changes.service.js';
import { UserChangeEventDto } from './user-change-event.dto.js';

/** A page of the feed and the token to continue after it. */
export class ChangesPageDto {
  @ApiProperty({
    type: [UserChangeEventDto],
    description: 'in feed order: per user, in increasing version',
  })
  events: UserChangeEventDto[];

  @ApiProperty({
    example: 'WyI3NTYiLCI0MiJd.Qv0m8dkqXbC2GZ6y',
    description: 'pass it as `after` to continue exactly after this page (also when it is empty)',
  })
  next: string;

  static from(page: ChangesPage): ChangesPageDto {
    const dto = new ChangesPageDto();
    dto.events = page.events.map((change) => UserChangeEventDto.from(change));
    dto.next = page.next;
    return dto;
  }
}
