/**
 * The demo dataset: written on the first start of the embedded database and by
 * `npm run db:seed`. Together the profiles use every record type of the specification, empty
 * values, non-ASCII names and text, a profile without records and a record type the
 * specification does not know. `demo@me` is exactly the contract's example.
 *
 * Private e-mails here are on example.com / example.org, which are reserved and reach nobody.
 */
import type { DataObject } from './data-line.js';

export const DEMO_DATA: readonly DataObject[] = [
  { kind: 'namespace', name: 'me', ownerEmail: 'owner@example.com' },
  { kind: 'namespace', name: 'studio', ownerEmail: 'Studio.Admin@example.org' },
  { kind: 'namespace', name: 'мир', ownerEmail: 'mir-owner@example.org' },
  {
    kind: 'profile',
    name: 'demo@me',
    creatorEmail: 'maker@example.com',
    description: 'A sample profile that shows every kind of record.',
    image: 'https://img.example.org/avatars/demo@me.jpg',
    level: 2,
    records: {
      '1': { type: 'name', value: 'Demo Person' },
      '2': { type: 'email', value: 'hello@demo.example' },
      '3': { type: 'website', value: 'https://demo.example' },
      '4': { type: 'phone', value: '+15550100,+15550111' },
      '5': { type: 'tg_bot', value: '' },
      '6': { type: 'social', value: { twitter: 'demo', discord: 'demo#0001', instagram: 'demo.pics' } },
      '7': { type: 'link', value: { Blog: 'https://blog.demo.example', Shop: 'https://shop.demo.example' } },
      '8': {
        type: 'crypto',
        value: {
          btc: 'bc1qdemo0000000000000000000000000000000',
          eth: '0x0000000000000000000000000000000000dE0000',
          sol: 'DemoSo1ana111111111111111111111111111111111',
        },
      },
      '9': { type: 'notes', value: { Hours: 'Mon-Fri 9-17', Address: '1 Sample Street, Example City' } },
      '20': { type: 'img', value: { cover: 'https://img.example.org/demo/cover.png' } },
      '50': { type: 'web_url', value: 'https://profiles.example.org/demo@me' },
      '51': { type: 'web3_url', value: '' },
    },
  },
  {
    kind: 'profile',
    name: 'empty@me',
    creatorEmail: 'maker@example.com',
    // No description, image, level or records: the lookup answers "", "", 0 and {}.
  },
  {
    kind: 'profile',
    name: 'blank@me',
    creatorEmail: 'someone@example.org',
    description: '',
    image: '',
    level: 0,
    records: {
      '1': { type: 'name', value: '' },
      '2': { type: 'email', value: '' },
      '4': { type: 'phone', value: '' },
      '6': { type: 'social', value: {} },
      '7': { type: 'link', value: {} },
      '50': { type: 'web_url', value: '' },
      '51': { type: 'web3_url', value: '' },
    },
  },
  {
    kind: 'profile',
    name: 'zoë.müller@studio',
    creatorEmail: 'zoe@example.org',
    description: 'Céramiste à Genève — naïve shapes, crème glazes, déjà vu guaranteed.',
    image: 'https://img.example.org/avatars/zoe.png',
    level: 5,
    records: {
      '1': { type: 'name', value: 'Zoë Müller' },
      '3': { type: 'website', value: 'https://zoe.example.org' },
      '4': { type: 'phone', value: '+41 22 555 01 00' },
      '6': { type: 'social', value: { instagram: 'zoe.ceramique', tiktok: 'zoe_pots', youtube: 'ZoeAtTheWheel' } },
      '7': {
        type: 'link',
        value: { 'Boutique (été)': 'https://shop.zoe.example.org', Atelier: 'https://zoe.example.org/atelier' },
      },
      '20': {
        type: 'img',
        value: { vase: 'https://img.example.org/zoe/vase.jpg', bowl: 'https://img.example.org/zoe/bowl.jpg' },
      },
    },
  },
  {
    kind: 'profile',
    name: 'はなこ@me',
    creatorEmail: 'hanako@example.com',
    description: '東京のイラストレーターです。Crème brûlée enthusiast.',
    image: '',
    level: 1,
    records: {
      '1': { type: 'name', value: '山田 花子' },
      '5': { type: 'tg_bot', value: '@hanako_draws_bot' },
      '6': { type: 'social', value: { twitter: 'hanako_draws', facebook: '', linkedin: 'hanako-yamada' } },
      '9': { type: 'notes', value: { 営業時間: '10:00–18:00', Commission: 'open' } },
      '51': { type: 'web3_url', value: 'https://hanako.example.org/web3' },
    },
  },
  {
    kind: 'profile',
    name: 'алиса@мир',
    creatorEmail: 'alisa@example.org',
    description: 'Привет! Пишу о путешествиях.',
    image: 'https://img.example.org/avatars/alisa.jpg',
    level: 3,
    records: {
      '1': { type: 'name', value: 'Алиса Иванова' },
      '2': { type: 'email', value: 'alisa@mir.example' },
      '6': { type: 'social', value: { telegram: 'alisa_travels', discord: 'alisa#4242' } },
      '8': { type: 'crypto', value: { eth: '0x00000000000000000000000000000000000a1150' } },
      '50': { type: 'web_url', value: 'https://profiles.example.org/алиса@мир' },
    },
  },
  {
    kind: 'profile',
    name: 'lab@studio',
    creatorEmail: 'lab@example.com',
    description: 'Experiments with record types that the specification does not list.',
    image: '',
    level: 0,
    records: {
      '1': { type: 'name', value: 'Studio Lab' },
      // Record types are stored data: these are kept and served as they are.
      '60': { type: 'pgp_key', value: 'F00D 1234 5678 9ABC DEF0  1234 5678 9ABC DEF0 C0DE' },
      '61': { type: 'opening_hours', value: { mon: '9-17', sat: 'closed' } },
    },
  },
];

/** The demo dataset as NDJSON lines, the form the importer reads. */
export function demoDataLines(): string[] {
  return DEMO_DATA.map((object) => JSON.stringify(object));
}
