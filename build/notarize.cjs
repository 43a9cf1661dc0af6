// electron-builder's afterSign hook: sends the signed macOS app to Apple's notary service, but only when
// credentials are in the environment; without them (a local or unsigned build) it says so and does nothing.
// CommonJS, so electron-builder can require it whatever its module loader does.
//
// Credentials, any one set: APPLE_API_KEY (path to the .p8) + APPLE_API_KEY_ID + APPLE_API_ISSUER;
// APPLE_ID + APPLE_APP_SPECIFIC_PASSWORD + APPLE_TEAM_ID; or APPLE_KEYCHAIN_PROFILE (from `notarytool
// store-credentials`).
'use strict';
const path = require('node:path');

/** The notarize options the environment provides, or null. */
function credentials(env) {
  if (env.APPLE_API_KEY && env.APPLE_API_KEY_ID && env.APPLE_API_ISSUER) {
    return { appleApiKey: env.APPLE_API_KEY, appleApiKeyId: env.APPLE_API_KEY_ID, appleApiIssuer: env.APPLE_API_ISSUER };
  }
  if (env.APPLE_ID && env.APPLE_APP_SPECIFIC_PASSWORD && env.APPLE_TEAM_ID) {
    return { appleId: env.APPLE_ID, appleIdPassword: env.APPLE_APP_SPECIFIC_PASSWORD, teamId: env.APPLE_TEAM_ID };
  }
  if (env.APPLE_KEYCHAIN_PROFILE) return { keychainProfile: env.APPLE_KEYCHAIN_PROFILE };
  return null;
}

async function afterSign(context, env = process.env) {
  if (context.electronPlatformName !== 'darwin') return 'not macOS';
  const creds = credentials(env);
  if (!creds) {
    process.stdout.write('  • notarize: skipped (no Apple credentials in the environment)\n');
    return 'skipped';
  }
  const appPath = path.join(context.appOutDir, `${context.packager.appInfo.productFilename}.app`);
  // loaded only now: a build without credentials needs nothing of it
  const { notarize } = require('@electron/notarize');
  process.stdout.write(`  • notarize: sending ${appPath} to Apple\n`);
  await notarize({ appPath, ...creds });
  return 'notarized';
}

module.exports = afterSign;
module.exports.default = afterSign;
module.exports.credentials = credentials;
