/**
 * `target-health temporal …` hands the Temporal CLI this project's connection settings as the
 * environment variables the CLI reads (flags typed by the user still win — proven against the dev
 * server in test/integration/temporal-cli.test.ts).
 */
import { temporalCliEnv } from '../../../server/config/env';
import { UserError } from '../../../core/common/user-error';

test('address and namespace: the validated settings, defaults included', () => {
  expect(temporalCliEnv({ PATH: '/bin' })).toEqual({
    PATH: '/bin',
    TEMPORAL_ADDRESS: 'localhost:7233',
    TEMPORAL_NAMESPACE: 'default',
  });
  expect(temporalCliEnv({ TEMPORAL_ADDRESS: '127.0.0.1:7999', TEMPORAL_NAMESPACE: 'crawl' })).toMatchObject({
    TEMPORAL_ADDRESS: '127.0.0.1:7999',
    TEMPORAL_NAMESPACE: 'crawl',
  });
});

test("our TLS variables under the Temporal CLI's names; a name the user set for the CLI is kept", () => {
  const env = temporalCliEnv({
    TEMPORAL_TLS: 'yes',
    TEMPORAL_TLS_CERT_PATH: __filename,
    TEMPORAL_TLS_KEY_PATH: __filename,
    TEMPORAL_TLS_CA_PATH: __filename,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/etc/their-ca.pem',
  });
  expect(env).toMatchObject({
    TEMPORAL_TLS: 'true',
    TEMPORAL_TLS_CLIENT_CERT_PATH: __filename,
    TEMPORAL_TLS_CLIENT_KEY_PATH: __filename,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/etc/their-ca.pem',
  });
  expect(temporalCliEnv({ TEMPORAL_TLS: '0' }).TEMPORAL_TLS).toBe('false');
  expect(temporalCliEnv({}).TEMPORAL_TLS).toBeUndefined();
});

test('a malformed setting is refused with the line every command gives', () => {
  expect(() => temporalCliEnv({ TEMPORAL_ADDRESS: 'localhost' })).toThrow(UserError);
  expect(() => temporalCliEnv({ TEMPORAL_ADDRESS: 'localhost' })).toThrow(
    'TEMPORAL_ADDRESS: must be host:port, e.g. localhost:7233 or my-ns.tmprl.cloud:7233 (got "localhost")',
  );
});
