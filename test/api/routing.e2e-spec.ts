// Any route: unknown routes and methods, and the request id every answer carries.
import { t, useUsersApi } from '../support/users-api.js';

describe('Users API (e2e)', () => {
  useUsersApi();

  describe('any route', () => {
    it('answers an unknown route and an unsupported method with a JSON 404', async () => {
      const unknown = await t.http().get('/nope?secret=1').expect(404);
      expect(unknown.body).toEqual({ error: 'no route for GET /nope' });
      expect(unknown.headers['content-type']).toBe('application/json; charset=utf-8');
      const method = await t.http().delete('/users').expect(404);
      expect(method.body).toEqual({ error: 'no route for DELETE /users' });
    });

    it('echoes a well-formed x-request-id and replaces any other with a UUID', async () => {
      const kept = await t.http().get('/users/1').set('x-request-id', 'req-42.a:b_c').expect(404);
      expect(kept.headers['x-request-id']).toBe('req-42.a:b_c');
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
        const res = await t.http().get('/users').set('x-request-id', bad).expect(200);
        expect(res.headers['x-request-id']).toMatch(uuid);
      }
      const parseError = await t
        .http()
        .post('/users')
        .set('content-type', 'application/json')
        .send('{')
        .expect(400);
      expect(parseError.headers['x-request-id']).toMatch(uuid);
    });
  });
});
