import { UserError } from '../core/common/user-error';
import { tryNormaliseSite } from '@target-health/crawler/events/site';

/** A `<site>` argument as the normalised host, or a one-line error naming the argument. */
export function siteArgument(raw: string): string {
  const result = tryNormaliseSite(raw);
  if (!result.ok) throw new UserError(`site: ${result.error.message}`);
  return result.site;
}
