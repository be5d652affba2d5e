/**
 * Which bank stands behind a mandate, as both adapters report it (GatewayEvent.bank): one short upper-case name per
 * bank, so autopay analytics group one bank's attempts together whichever gateway and field named it. Razorpay names
 * banks by the first four letters of their IFSC (`HDFC`, `ICIC`, `SBIN`, `UTIB`) in `bank` and `card.issuer`; Stripe
 * gives the issuer's name (`card.issuer`); a UPI payment names no bank at either gateway, only the VPA, whose handle
 * (`@okhdfcbank`) belongs to one PSP bank.
 */

/** IFSC bank codes (and a few long names) -> the short name reported. */
const ALIASES: Record<string, string> = {
  HDFC: 'HDFC',
  'HDFC BANK': 'HDFC',
  ICIC: 'ICICI',
  'ICICI BANK': 'ICICI',
  SBIN: 'SBI',
  'STATE BANK OF INDIA': 'SBI',
  UTIB: 'AXIS',
  'AXIS BANK': 'AXIS',
  KKBK: 'KOTAK',
  'KOTAK MAHINDRA BANK': 'KOTAK',
  YESB: 'YES',
  'YES BANK': 'YES',
  PUNB: 'PNB',
  BARB: 'BOB',
  IDFB: 'IDFC',
  INDB: 'INDUSIND',
  PYTM: 'PAYTM',
  AIRP: 'AIRTEL',
};

/** UPI handles (the part after `@`) -> the PSP bank that runs them. */
const UPI_HANDLES: Record<string, string> = {
  okhdfcbank: 'HDFC',
  hdfcbank: 'HDFC',
  okhdfc: 'HDFC',
  okicici: 'ICICI',
  icici: 'ICICI',
  ibl: 'ICICI',
  oksbi: 'SBI',
  sbi: 'SBI',
  okaxis: 'AXIS',
  axisbank: 'AXIS',
  axl: 'AXIS',
  ybl: 'YES',
  yesbank: 'YES',
  kotak: 'KOTAK',
  kmbl: 'KOTAK',
  paytm: 'PAYTM',
  ptyes: 'YES',
  ptaxis: 'AXIS',
  pthdfc: 'HDFC',
  ptsbi: 'SBI',
  airtel: 'AIRTEL',
  idfcbank: 'IDFC',
  pnb: 'PNB',
  barodampay: 'BOB',
};

/** A bank as a gateway wrote it -> the reported name (upper case, at most 40 characters); null when absent. */
export function normaliseBank(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const s = raw.trim().replace(/\s+/g, ' ').toUpperCase();
  if (!s) return null;
  return ALIASES[s] ?? s.slice(0, 40);
}

/** The PSP bank of a UPI VPA's handle (`asha@okhdfcbank` -> HDFC); null for a handle not in the table. */
export function bankFromVpa(vpa: unknown): string | null {
  if (typeof vpa !== 'string') return null;
  const at = vpa.lastIndexOf('@');
  if (at < 0) return null;
  return (
    UPI_HANDLES[
      vpa
        .slice(at + 1)
        .trim()
        .toLowerCase()
    ] ?? null
  );
}

/** How a mandate was set up, as analytics count it: the gateways' own method names, anything else `unknown`. */
export type MandateMethodName = 'upi' | 'card' | 'emandate' | 'unknown';

export function mandateMethod(raw: unknown): MandateMethodName {
  if (raw === 'upi' || raw === 'card' || raw === 'emandate') return raw;
  // Razorpay's paper NACH is an e-mandate's offline twin: the same bank-account debit authority.
  if (raw === 'nach') return 'emandate';
  return 'unknown';
}
