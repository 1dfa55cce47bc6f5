export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as Record<string, unknown>).__TH_SERVICES__ as { stop(): Promise<unknown> } | undefined;
  await services?.stop();
}
