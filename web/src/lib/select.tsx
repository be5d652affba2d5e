import { NativeSelect, type NativeSelectProps } from '@mantine/core';

/**
 * A choice in a native <select>, with the API of Mantine's Select (value / onChange with the value or null, data,
 * clearable with a placeholder): the browser's own control is accessible and costs nothing, where Mantine's
 * combobox cost 12 KB of the bundle.
 */
export function Select({
  value,
  onChange,
  data,
  clearable,
  placeholder,
  searchable: _searchable,
  ...rest
}: Omit<NativeSelectProps, 'value' | 'onChange' | 'data'> & {
  value: string | null;
  onChange: (value: string | null) => void;
  data: (string | { value: string; label: string })[];
  clearable?: boolean;
  placeholder?: string;
  searchable?: boolean;
}) {
  const options = data.map((d) => (typeof d === 'string' ? { value: d, label: d } : d));
  const blank = clearable || value === null ? [{ value: '', label: placeholder ?? '—' }] : [];
  return (
    <NativeSelect
      {...rest}
      value={value ?? ''}
      onChange={(e) => onChange(e.currentTarget.value === '' ? null : e.currentTarget.value)}
      data={[...blank, ...options]}
    />
  );
}
