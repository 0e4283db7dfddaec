/**
 * Every Ajv instance that compiles a schema once this module has loaded: import it before anything that makes one.
 * Ajv and Ajv2020 share one compile method (ajv/dist/core), which is wrapped here to note the instance calling it.
 */
import AjvCore from 'ajv/dist/core.js';

export const compilingAjvs = new Set<AjvCore.default>();

/** Ajv's prototype as far as the census needs it: its compile method, wrapped below, each call keeping its own `this`. */
const prototype: { compile: (this: AjvCore.default, ...args: never[]) => unknown } = AjvCore.default.prototype;
prototype.compile = new Proxy(prototype.compile, {
  apply(compile, ajv: AjvCore.default, args: never[]) {
    compilingAjvs.add(ajv);
    return Reflect.apply(compile, ajv, args);
  },
});

/** What tells an instance's option set apart: its dialect, coercion, defaults and error collection. */
export function optionSet(ajv: AjvCore.default): string {
  const { coerceTypes = false, useDefaults = false, allErrors = false } = ajv.opts;
  return `${ajv.constructor.name} coerceTypes=${String(coerceTypes)} useDefaults=${String(useDefaults)} allErrors=${String(allErrors)}`;
}
