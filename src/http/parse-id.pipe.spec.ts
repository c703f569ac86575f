import { BadRequestException } from '@nestjs/common';
import { ParseIdPipe, parseId } from './parse-id.pipe.js';

describe(parseId.name, () => {
  it.each([
    ['1', 1],
    ['42', 42],
    ['2147483647', 2147483647],
  ])('accepts %s', (value, id) => {
    expect(parseId(value)).toBe(id);
  });

  it.each([
    'abc',
    '1abc',
    '0',
    '-1',
    '1.5',
    '2147483648',
    '9999999999',
    '99999999999',
    ' ',
    ' 1',
    '01',
    '+1',
    '1e3',
    '',
    '0x1',
  ])('rejects %j', (value) => {
    expect(parseId(value)).toBeUndefined();
  });

  it('rejects non-strings', () => {
    expect(parseId(1)).toBeUndefined();
    expect(parseId(['1'])).toBeUndefined();
  });
});

describe(ParseIdPipe.name, () => {
  const pipe = new ParseIdPipe();

  it('answers the documented message for a bad id', () => {
    expect(() => pipe.transform('x')).toThrow(
      new BadRequestException('id must be a positive 32-bit integer'),
    );
  });

  it('returns the number', () => {
    expect(pipe.transform('7')).toBe(7);
  });
});
