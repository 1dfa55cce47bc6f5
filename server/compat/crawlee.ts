/** `target-health/crawlee`: kept for existing users; the adapter lives in `@target-health/crawler/crawlee`. */
export * from '@target-health/crawler/crawlee';
