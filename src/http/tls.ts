/**
 * HTTPS (DESIGN §6): with `BATON_TLS_CERT_FILE` and `BATON_TLS_KEY_FILE` the
 * server speaks HTTPS only; with `BATON_TLS_CA_FILE` as well, a client must
 * present a certificate signed by one of those CAs (mutual TLS), refused at
 * the handshake otherwise. A file that cannot be read, or a key that does not
 * match its certificate, stops the start with one sentence naming the
 * variable.
 *
 * @module
 */
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { readFileSync } from 'node:fs';
import { ConfigError, type Config } from '../config.js';

export interface HttpsOptions extends SecureContextOptions {
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
  minVersion: 'TLSv1.2';
}

function pem(file: string, variable: string): Buffer {
  try {
    return readFileSync(file);
  } catch {
    throw new ConfigError(`${variable} (${file}) cannot be read; check that the file exists and the service may read it.`);
  }
}

/** Fastify's `https` option for the configuration, or undefined for plain HTTP. */
export function httpsOptions(config: Pick<Config, 'tlsCertFile' | 'tlsKeyFile' | 'tlsCaFile'>): HttpsOptions | undefined {
  const { tlsCertFile, tlsKeyFile, tlsCaFile } = config;
  if (tlsCertFile === undefined && tlsKeyFile === undefined) {
    if (tlsCaFile !== undefined) throw new ConfigError('BATON_TLS_CA_FILE needs BATON_TLS_CERT_FILE and BATON_TLS_KEY_FILE: client certificates are asked for only over HTTPS.');
    return undefined;
  }
  if (tlsCertFile === undefined || tlsKeyFile === undefined) throw new ConfigError('BATON_TLS_CERT_FILE and BATON_TLS_KEY_FILE go together: set both to serve HTTPS, or neither.');
  const options: HttpsOptions = { cert: pem(tlsCertFile, 'BATON_TLS_CERT_FILE'), key: pem(tlsKeyFile, 'BATON_TLS_KEY_FILE'), minVersion: 'TLSv1.2' };
  if (tlsCaFile !== undefined) Object.assign(options, { ca: pem(tlsCaFile, 'BATON_TLS_CA_FILE'), requestCert: true, rejectUnauthorized: true });
  try {
    // Parses the PEMs and checks the key against the certificate now, not at the first handshake.
    createSecureContext(options);
  } catch {
    throw new ConfigError('BATON_TLS_CERT_FILE and BATON_TLS_KEY_FILE do not form a certificate and its private key (PEM); check that the key belongs to the certificate.');
  }
  return options;
}
