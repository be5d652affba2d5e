/** Saves a file the API answered as base64 (an invoice PDF) under its own name, as a browser download. */
export function downloadBase64(base64: string, contentType: string, filename: string): void {
  const url = URL.createObjectURL(base64Blob(base64, contentType));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The bytes of a base64 answer as a Blob (for a download or an in-page PDF view). */
export function base64Blob(base64: string, contentType: string): Blob {
  const bin = atob(base64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Blob([bytes], { type: contentType });
}
