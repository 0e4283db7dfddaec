/**
 * A software WebAuthn authenticator for tests: what a platform authenticator (a phone's or a laptop's screen lock)
 * does, in code, with node:crypto (and tiny-cbor for CBOR). It answers the options the store hands the browser with real responses the
 * store verifies as it would a browser's: `register` (navigator.credentials.create, attestation "none") and
 * `authenticate` (navigator.credentials.get). Each credential is an EC P-256 key pair (COSE alg -7, ES256) with its
 * own signature counter, which goes up by one on every assertion.
 *
 *   const authenticator = new SoftwareAuthenticator();
 *   const registration = authenticator.register(creationOptions, 'http://localhost:3000');
 *   const assertion = authenticator.authenticate(requestOptions, 'http://localhost:3000');
 *   authenticator.authenticate(requestOptions, origin, { userVerified: false }); // UV flag off
 *   authenticator.authenticate(requestOptions, origin, { credentialId });       // this credential, even if not allowed
 *
 * Unlike a real one it signs whatever it is asked, which is what tests of the server's checks need.
 * See https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data for the byte layouts.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { encodeCBOR, type CBORType } from '@levischuck/tiny-cbor';

/** CBOR (RFC 8949) by tiny-cbor, the encoder @simplewebauthn/server decodes with: attestation objects and COSE keys. */
const cbor = (value: CBORType): Buffer => Buffer.from(encodeCBOR(value));

// --- the authenticator ---

const FLAG_UP = 0x01; // user present
const FLAG_UV = 0x04; // user verified
const FLAG_AT = 0x40; // attested credential data follows

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest();
const b64url = (data: Uint8Array) => Buffer.from(data).toString('base64url');

interface Credential {
  id: Buffer;
  rpId: string;
  userHandle: string | undefined;
  privateKey: KeyObject;
  publicKey: KeyObject;
  counter: number;
}

export interface AuthenticateOptions {
  /** Whether the user was verified (the UV flag); true by default. */
  userVerified?: boolean;
  /** The credential to sign with (base64url), even one the options do not allow; by default the first allowed one held. */
  credentialId?: string;
  /** The signature counter to report instead of the next one (a cloned authenticator); the kept counter is not changed. */
  counter?: number;
}

export class SoftwareAuthenticator {
  private readonly credentials = new Map<string, Credential>();

  /** The credentials this authenticator holds (base64url ids), oldest first. */
  get credentialIds(): string[] {
    return [...this.credentials.keys()];
  }

  /** The counter a credential signs with next time minus one (what the server should have stored). */
  counterOf(credentialId: string): number {
    return this.credential(credentialId).counter;
  }

  /** A credential's public key as a COSE_Key (CBOR map): what a relying party stores. */
  cosePublicKey(credentialId: string): Buffer {
    return coseKey(this.credential(credentialId).publicKey);
  }

  private credential(id: string): Credential {
    const credential = this.credentials.get(id);
    if (!credential) throw new Error(`software authenticator: no credential ${id}`);
    return credential;
  }

  /** navigator.credentials.create(): a new ES256 credential for the options' RP, attested with format "none". */
  register(options: PublicKeyCredentialCreationOptionsJSON, origin: string, { userVerified = true }: { userVerified?: boolean } = {}): RegistrationResponseJSON {
    const rpId = options.rp.id ?? new URL(origin).hostname;
    if (!options.pubKeyCredParams.some((param) => param.alg === -7)) throw new Error('software authenticator: the options do not accept ES256 (-7)');
    const excluded = (options.excludeCredentials ?? []).find((c) => this.credentials.get(c.id)?.rpId === rpId);
    if (excluded) throw new Error(`software authenticator: already holds excluded credential ${excluded.id} (InvalidStateError)`);

    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = randomBytes(32);
    const credential: Credential = { id, rpId, userHandle: options.user.id, privateKey, publicKey, counter: 0 };
    this.credentials.set(b64url(id), credential);

    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      authenticatorData(rpId, FLAG_UP | (userVerified ? FLAG_UV : 0) | FLAG_AT, credential.counter),
      Buffer.alloc(16), // AAGUID: zeros, as with attestation "none"
      idLength,
      id,
      coseKey(publicKey),
    ]);
    const attestationObject = cbor(new Map<string, CBORType>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false }));
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        authenticatorData: b64url(authData),
        transports: ['internal'],
        publicKeyAlgorithm: -7,
        publicKey: b64url(publicKey.export({ type: 'spki', format: 'der' })),
      },
    };
  }

  /** navigator.credentials.get(): an assertion over the options' challenge, signed by one held credential. */
  authenticate(options: PublicKeyCredentialRequestOptionsJSON, origin: string, { userVerified = true, credentialId, counter }: AuthenticateOptions = {}): AuthenticationResponseJSON {
    const rpId = options.rpId ?? new URL(origin).hostname;
    const allowed = options.allowCredentials ?? [];
    const chosen =
      credentialId ??
      (allowed.length > 0
        ? allowed.map((c) => c.id).find((id) => this.credentials.get(id)?.rpId === rpId)
        : this.credentialIds.find((id) => this.credentials.get(id)!.rpId === rpId));
    if (chosen === undefined) throw new Error('software authenticator: no credential for these options (NotAllowedError)');
    const credential = this.credential(chosen);
    if (counter === undefined) credential.counter += 1;

    const authData = authenticatorData(rpId, FLAG_UP | (userVerified ? FLAG_UV : 0), counter ?? credential.counter);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin, crossOrigin: false }));
    // ECDSA with SHA-256 over authenticatorData ‖ SHA-256(clientDataJSON); node signs in DER, as WebAuthn wants.
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: chosen,
      rawId: chosen,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(credential.userHandle !== undefined ? { userHandle: credential.userHandle } : {}),
      },
    };
  }
}

/** The first 37 bytes of authenticator data: SHA-256(RP ID) ‖ flags ‖ signature counter (32 bits, big-endian). */
function authenticatorData(rpId: string, flags: number, signCount: number): Buffer {
  const tail = Buffer.alloc(5);
  tail[0] = flags;
  tail.writeUInt32BE(signCount, 1);
  return Buffer.concat([sha256(rpId), tail]);
}

/** An EC2 P-256 public key as a COSE_Key: {1 (kty): 2 (EC2), 3 (alg): -7 (ES256), -1 (crv): 1 (P-256), -2: x, -3: y}. */
function coseKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  const coordinate = (value: string | undefined) => Buffer.from(value ?? '', 'base64url');
  return cbor(
    new Map<number, CBORType>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, coordinate(jwk.x)],
      [-3, coordinate(jwk.y)],
    ]),
  );
}
