import { builder } from '../builder.js';
import { AttributeValueRef, type AttributeValueShape } from './attribute-value.js';

export interface AttributeShape {
  traitType: 'domain' | 'level' | 'length';
  value: AttributeValueShape;
}

export const AttributeRef = builder.objectRef<AttributeShape>('Attribute').implement({
  description: 'A metadata trait in the NFT metadata format (`trait_type` and `value` in REST).',
  fields: (t) => ({
    traitType: t.exposeString('traitType', { description: '`domain`, `level` or `length`.' }),
    value: t.field({ type: AttributeValueRef, resolve: (attribute) => attribute.value }),
  }),
});
