export function AgentImport() {
  return null;
}
