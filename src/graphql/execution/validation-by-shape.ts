/**
 * Validation by shape: a document that differs from one already found valid only in the text of
 * its string literals is valid too, so it is not validated again. Clients that write the name
 * into the document (`{ profile(name: "alice@acme") { … } }`, a new text per request) then pay
 * for parsing and execution only; validation was most of their cost (see docs/decisions.md,
 * "Validation by shape").
 *
 * Why it holds: of graphql-js's rules and graphql-armor's limits, only two look at a literal's
 * content. ValuesOfCorrectType asks the argument's scalar whether it accepts the literal; the
 * built-in scalars accept every string (String, ID) or none (Int, Float, Boolean), whatever it
 * says, and so does every enum and input object. A custom scalar may not, so a schema with one
 * in an input position switches this off. OverlappingFieldsCanBeMerged compares arguments for
 * equality, so the shape keeps which literals are equal: each distinct literal (by value, and by
 * block or plain form, which graphql-js prints apart) gets one placeholder. Only valid results
 * are kept: an error message may quote the literal, so an invalid document is always validated
 * in full. The shape itself is computed in ./document-shape.ts.
 */
import {
  type GraphQLInputType,
  type GraphQLSchema,
  getNamedType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { shapeOf } from './document-shape.js';

/** Shapes of valid documents kept, at most this many bytes of them (two per character). */
const SHAPE_CACHE_BYTES = 4 * 1024 * 1024;

export function validationByShape(schema: GraphQLSchema, maxBytes = SHAPE_CACHE_BYTES): Plugin {
  if (!stringLiteralsAreContentFree(schema)) return {};
  const validShapes = new LRUCache<string, true>({
    maxSize: maxBytes,
    sizeCalculation: (_valid, shape) => Math.max(1, shape.length * 2),
  });
  return {
    onValidate({ params, setResult }) {
      const shape = shapeOf(params.documentAST)?.text;
      if (shape === undefined) return;
      if (validShapes.get(shape) === true) {
        setResult([]);
        return;
      }
      return ({ valid }) => {
        if (valid && shape.length * 2 <= maxBytes) validShapes.set(shape, true);
      };
    },
  };
}

/** Whether every scalar a literal can be given to is built in (its verdict ignores content). */
export function stringLiteralsAreContentFree(schema: GraphQLSchema): boolean {
  return customInputScalars(schema).length === 0;
}

/** Every argument and input field whose type is a scalar not built into GraphQL, as `where: Scalar`. */
export function customInputScalars(schema: GraphQLSchema): string[] {
  const found: string[] = [];
  const check = (where: string, type: GraphQLInputType) => {
    const named = getNamedType(type);
    if (isScalarType(named) && !isSpecifiedScalarType(named)) found.push(`${where}: ${named.name}`);
  };
  for (const directive of schema.getDirectives()) {
    for (const arg of directive.args) check(`@${directive.name}(${arg.name})`, arg.type);
  }
  for (const type of Object.values(schema.getTypeMap())) {
    if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) check(`${type.name}.${field.name}`, field.type);
    } else if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name})`, arg.type);
      }
    }
  }
  return found;
}
