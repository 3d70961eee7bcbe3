// The changelog entry shape the system screen reads (GET /api/changelog,
// server side in server/internal/api/routes_inventory.go); the console calls
// the inventory's operations through the typed client (client.ts).
export interface ChangelogEntry {
  version: string;
  date: string;
  changes: string[];
}
