/**
 * GST state codes (the first two digits of a GSTIN, and the place of supply on a tax invoice) and their names, as the
 * GST portal lists them. 25 and 26 both stand for the merged union territory since 2020; 28 is Andhra Pradesh before
 * the 2014 division (37 after it); 97 is "Other Territory" (offshore areas and the like).
 */
export const GST_STATES: Readonly<Record<string, string>> = Object.freeze({
  '01': 'Jammu and Kashmir',
  '02': 'Himachal Pradesh',
  '03': 'Punjab',
  '04': 'Chandigarh',
  '05': 'Uttarakhand',
  '06': 'Haryana',
  '07': 'Delhi',
  '08': 'Rajasthan',
  '09': 'Uttar Pradesh',
  '10': 'Bihar',
  '11': 'Sikkim',
  '12': 'Arunachal Pradesh',
  '13': 'Nagaland',
  '14': 'Manipur',
  '15': 'Mizoram',
  '16': 'Tripura',
  '17': 'Meghalaya',
  '18': 'Assam',
  '19': 'West Bengal',
  '20': 'Jharkhand',
  '21': 'Odisha',
  '22': 'Chhattisgarh',
  '23': 'Madhya Pradesh',
  '24': 'Gujarat',
  '25': 'Daman and Diu',
  '26': 'Dadra and Nagar Haveli and Daman and Diu',
  '27': 'Maharashtra',
  '28': 'Andhra Pradesh (before division)',
  '29': 'Karnataka',
  '30': 'Goa',
  '31': 'Lakshadweep',
  '32': 'Kerala',
  '33': 'Tamil Nadu',
  '34': 'Puducherry',
  '35': 'Andaman and Nicobar Islands',
  '36': 'Telangana',
  '37': 'Andhra Pradesh',
  '38': 'Ladakh',
  '97': 'Other Territory',
  '99': 'Centre Jurisdiction',
});

/** The state's name, or null for a code outside the table (or none). */
export function gstStateName(code: string | null | undefined): string | null {
  return code ? (GST_STATES[code] ?? null) : null;
}

/** "Maharashtra (27)" for printing; the bare code when it is not in the table. */
export function gstStateLabel(code: string | null | undefined): string | null {
  if (!code) return null;
  const name = gstStateName(code);
  return name ? `${name} (${code})` : code;
}
