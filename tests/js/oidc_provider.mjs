// A certified OpenID Connect provider (panva's oidc-provider) on loopback, for the sign-in
// tests: node oidc_provider.mjs CONFIG.json. The config names the port, the one client and a
// file of accounts ({"alice": {"groups": [...]}}) read again at every sign-in, so a test
// changes someone's groups by rewriting it. Its development login page takes any password.
import fs from 'node:fs';
import http from 'node:http';

import Provider from 'oidc-provider';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: config.client_id,
    client_secret: config.client_secret,
    redirect_uris: config.redirect_uris,
    post_logout_redirect_uris: config.post_logout_redirect_uris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
  },
  cookies: { keys: ['vigil-test-only-cookie-key'] },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
  },
  async findAccount(ctx, id) {
    const accounts = JSON.parse(fs.readFileSync(config.accounts, 'utf8'));
    if (!Object.hasOwn(accounts, id)) return undefined;
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          preferred_username: id,
          name: id,
          email: `${id}@example.com`,
          email_verified: true,
          groups: accounts[id].groups,
        };
      },
    };
  },
});
provider.proxy = false;

http.createServer(provider.callback()).listen(config.port, '127.0.0.1', () => {
  console.log(`ready ${issuer}`);
});
