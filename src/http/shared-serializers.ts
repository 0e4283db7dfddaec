/**
 * Fastify's response serializers (fast-json-stringify), compiled once per process for each distinct response schema.
 *
 * Fastify compiles a serializer for every route's response schemas each time an app is built: about 40% of building
 * the store's app (some 150 ms of CPU). A store process builds one app; the test suite builds hundreds in a few dozen
 * processes, each the same routes with the same schemas. This is Fastify's own compiler (the one it uses when none is
 * given), with what it compiled kept by the schema's JSON text, together with the scope's shared schemas and the
 * serializer options: equal text, equal serializer, whichever app asks.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;
type Serializer = (data: unknown) => string;

const compileWithFastify = SerializerSelector();
/** A number for each scope's shared schemas and options (as JSON text): a short part of the keys below. */
const scopes = new Map<string, number>();
/** Compiled serializers by scope and response schema (as JSON text). */
const compiled = new Map<string, Serializer>();

/** For Fastify's `schemaController.compilersFactory.buildSerializer` (src/storefront/body-validation.ts). */
export const sharedSerializers: SerializerFactory = (externalSchemas, serializerOptions) => {
  const compile = compileWithFastify(externalSchemas, serializerOptions);
  const scopeText = JSON.stringify([externalSchemas ?? null, serializerOptions ?? null]);
  let scope = scopes.get(scopeText);
  if (scope === undefined) scopes.set(scopeText, (scope = scopes.size));
  return (route) => {
    const key = `${scope}\n${JSON.stringify(route.schema)}`;
    let serializer = compiled.get(key);
    if (!serializer) {
      serializer = compile(route) as Serializer;
      compiled.set(key, serializer);
    }
    return serializer;
  };
};
