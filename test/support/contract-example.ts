/**
 * The API contract's example answer of `GET /api/demo@me`, copied verbatim from the contract: the
 * oracle the demo data, the REST shape and the GraphQL fixtures are checked against, written out
 * independently of src/data/demo-data.ts.
 */
import type { RecordValue } from '../../src/db/schema.js';

export const CONTRACT_EXAMPLE = `{
  "name": "demo@me",
  "description": "A sample profile that shows every kind of record.",
  "image": "https://img.example.org/avatars/demo@me.jpg",
  "attributes": [
    {"trait_type": "domain", "value": "demo@me"},
    {"trait_type": "level", "value": 2},
    {"trait_type": "length", "value": 7}
  ],
  "records": {
    "1": {"type": "name", "value": "Demo Person"},
    "2": {"type": "email", "value": "hello@demo.example"},
    "3": {"type": "website", "value": "https://demo.example"},
    "4": {"type": "phone", "value": "+15550100,+15550111"},
    "5": {"type": "tg_bot", "value": ""},
    "6": {"type": "social", "value": {"twitter": "demo", "discord": "demo#0001", "instagram": "demo.pics"}},
    "7": {"type": "link", "value": {"Blog": "https://blog.demo.example", "Shop": "https://shop.demo.example"}},
    "8": {"type": "crypto", "value": {"btc": "bc1qdemo0000000000000000000000000000000", "eth": "0x0000000000000000000000000000000000dE0000", "sol": "DemoSo1ana111111111111111111111111111111111"}},
    "9": {"type": "notes", "value": {"Hours": "Mon-Fri 9-17", "Address": "1 Sample Street, Example City"}},
    "20": {"type": "img", "value": {"cover": "https://img.example.org/demo/cover.png"}},
    "50": {"type": "web_url", "value": "https://profiles.example.org/demo@me"},
    "51": {"type": "web3_url", "value": ""}
  }
}`;

/** The example's records, by key. */
export const CONTRACT_EXAMPLE_RECORDS = (
  JSON.parse(CONTRACT_EXAMPLE) as { records: Record<string, { type: string; value: RecordValue }> }
).records;
