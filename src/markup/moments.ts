/**
 * Times as the merchant and buyers read them: in the store's time zone (STORE_TIMEZONE), with the zone named, so
 * "29 November 2026, 14:05 CET" is never mistaken for another zone's. Pages, mails and the admin all format here.
 */

export interface Moments {
  /** The zone's IANA name (Europe/Berlin). */
  readonly timeZone: string;
  /** Date and time with the zone: "29 November 2026, 14:05 CET". */
  moment(at: Date): string;
  /** The date alone: "29 November 2026". */
  day(at: Date): string;
  /** The time with the zone: "14:05 CET". */
  time(at: Date): string;
  /** The calendar day in the zone, as YYYY-MM-DD (a day's bucket in a report). */
  dayKey(at: Date): string;
}

const cache = new Map<string, Moments>();

/** The formatter of a zone (validated by config: an unknown zone throws here). One per zone, kept. */
export function momentsIn(timeZone: string): Moments {
  const known = cache.get(timeZone);
  if (known) return known;
  const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone });
  // The zone's short name as people write it: US zones by their US abbreviation (EST, PDT), European ones by theirs
  // (CET, BST); an offset (GMT+5:30) where neither locale has a name.
  const zoneNames = ['en-US', 'en-GB'].map((locale) => new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'short' }));
  const dateOnly = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone });
  const timeOnly = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone });
  const isoDay = new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', timeZone });
  const zone = (at: Date) => {
    const names = zoneNames.map((format) => format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? timeZone);
    return names.find((name) => !name.startsWith('GMT')) ?? names[1]!;
  };
  const moments: Moments = {
    timeZone,
    moment: (at) => `${dateTime.format(at).replace(' at ', ', ')} ${zone(at)}`,
    day: (at) => dateOnly.format(at),
    time: (at) => `${timeOnly.format(at)} ${zone(at)}`,
    dayKey: (at) => isoDay.format(at),
  };
  cache.set(timeZone, moments);
  return moments;
}
