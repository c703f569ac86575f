import { AuthenticationError } from './auth-errors.js';
import { authorizationValues, bearerToken } from './bearer.js';

const refusal = (values: string[]) => {
  try {
    bearerToken(values);
  } catch (error) {
    return error instanceof AuthenticationError ? [error.reason, error.tokenSent] : error;
  }
  return 'accepted';
};

describe(bearerToken.name, () => {
  it('takes the token of one Bearer header, the scheme in any case', () => {
    expect(bearerToken(['Bearer abc.def.ghi'])).toBe('abc.def.ghi');
    expect(bearerToken(['bEaReR  a-b_c.d~e+f/g=='])).toBe('a-b_c.d~e+f/g==');
  });

  it('tells a missing header (no token sent) from a malformed one and from two', () => {
    expect(refusal([])).toEqual(['missing', false]);
    for (const value of [
      'Basic eDp5',
      'Bearer',
      'Bearer ',
      'Bearer a b',
      'Bearer a,b',
      'Bearerabc',
    ]) {
      expect([value, refusal([value])]).toEqual([value, ['malformed', true]]);
    }
    expect(refusal(['Bearer a', 'Bearer a'])).toEqual(['duplicate', true]);
  });
});

describe(authorizationValues.name, () => {
  it('finds every Authorization header in raw headers, whatever its case', () => {
    expect(
      authorizationValues(['Host', 'x', 'authorization', 'Bearer a', 'AUTHORIZATION', 'Bearer b']),
    ).toEqual(['Bearer a', 'Bearer b']);
    expect(authorizationValues(['Host', 'x', 'x-authorization', 'Bearer a'])).toEqual([]);
  });
});
