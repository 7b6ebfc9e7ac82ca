import { defineConfig } from 'drizzle-kit';

// Migrations are generated from src/db/schema.ts (`npm run db:generate`) and applied by the
// service itself at start (`npm run db:migrate` does the same on demand).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './drizzle',
});
