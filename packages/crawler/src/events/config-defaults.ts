/** The classifier settings a site gets unless its configuration says otherwise (docs/classification.md). */
export const CLASSIFIER_DEFAULTS = {
  /** A 2xx smaller than sizeRatio × the (site, page type) median is a soft block... */
  sizeRatio: 0.2,
  /** ...once the median rests on at least this many samples. */
  minSizeSamples: 20,
  /** An empty extraction is a soft block where the page type yields records at least this often... */
  minUsualRecordsRate: 0.9,
  /** ...over at least this many samples. */
  minRecordsSamples: 20,
  /** Pages up to this size corroborate weak markers (real block pages are small). */
  shortPageBytes: 8192,
} as const;
