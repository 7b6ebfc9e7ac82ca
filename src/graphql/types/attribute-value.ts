import { builder } from '../builder.js';

/** The value of an attribute: a string for `domain`, an integer for `level` and `length`. */
export type AttributeValueShape = { kind: 'string'; value: string } | { kind: 'int'; value: number };

export const StringAttributeValueRef = builder
  .objectRef<Extract<AttributeValueShape, { kind: 'string' }>>('StringAttributeValue')
  .implement({ fields: (t) => ({ value: t.exposeString('value') }) });

export const IntAttributeValueRef = builder
  .objectRef<Extract<AttributeValueShape, { kind: 'int' }>>('IntAttributeValue')
  .implement({ fields: (t) => ({ value: t.exposeInt('value') }) });

export const AttributeValueRef = builder.unionType('AttributeValue', {
  description: 'A string value (`domain`) or an integer value (`level`, `length`).',
  types: [StringAttributeValueRef, IntAttributeValueRef],
  resolveType: (value) => (value.kind === 'string' ? StringAttributeValueRef : IntAttributeValueRef),
});
