/**
 * The `deno` binary's sections and which of their pages a process has resident: the code and data
 * of the runtime that a process has run or read count in its RSS as file-backed pages
 * (bench/binary_pages.ts, bench/load_memory.ts).
 *
 * @module
 */

const PAGE = 4096;

/** A section of an ELF file that occupies the file: its name and range of file offsets. */
export interface Section {
  name: string;
  start: number;
  end: number;
}

/** The binary's sections that occupy the file: their names and ranges of file offsets. */
export function elfSections(path: string): Section[] {
  const file = Deno.openSync(path);
  try {
    const read = (offset: number, length: number): DataView => {
      const bytes = new Uint8Array(length);
      file.seekSync(offset, Deno.SeekMode.Start);
      let done = 0;
      while (done < length) done += file.readSync(bytes.subarray(done)) ?? length;
      return new DataView(bytes.buffer);
    };
    const header = read(0, 64);
    if (header.getUint32(0) !== 0x7f454c46 || header.getUint8(4) !== 2) {
      throw new Error(`${path} is not a 64-bit ELF file: this bench reads Linux binaries only.`);
    }
    const offset = Number(header.getBigUint64(0x28, true));
    const size = header.getUint16(0x3a, true);
    const count = header.getUint16(0x3c, true);
    const table = read(offset, size * count);
    const field = (index: number, at: number) => Number(table.getBigUint64(index * size + at, true));
    const namesAt = field(header.getUint16(0x3e, true), 24);
    const namesSize = field(header.getUint16(0x3e, true), 32);
    const strings = new Uint8Array(read(namesAt, namesSize).buffer);
    const nameAt = (start: number) => new TextDecoder().decode(strings.subarray(start, strings.indexOf(0, start)));
    const found = [];
    for (let index = 0; index < count; index++) {
      const type = table.getUint32(index * size + 4, true);
      const start = field(index, 24);
      const length = field(index, 32);
      // NOBITS (8) sections take no room in the file.
      if (type !== 8 && length > 0) {
        found.push({ name: nameAt(table.getUint32(index * size, true)), start, end: start + length });
      }
    }
    return found;
  } finally {
    file.close();
  }
}

/**
 * The bytes of its binary that a process has resident, by section (its pages mapped from the file);
 * synchronous, so that a process can read its own at `unload`.
 *
 * @param pid The process, or `self`.
 * @param sections The binary's sections, from {@linkcode elfSections}.
 */
export function residentBySection(pid: number | "self", sections: readonly Section[]): Map<string, number> {
  const executable = Deno.readLinkSync(`/proc/${pid}/exe`);
  const mappings = Deno.readTextFileSync(`/proc/${pid}/maps`).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[5] === executable)
    .map(([range, , offset]) => {
      const [start, end] = range.split("-").map((hex) => parseInt(hex, 16));
      return { start, end, offset: parseInt(offset, 16) };
    });
  const resident = new Map<string, number>();
  const pagemap = Deno.openSync(`/proc/${pid}/pagemap`);
  try {
    for (const mapping of mappings) {
      const pages = (mapping.end - mapping.start) / PAGE;
      const entries = new Uint8Array(pages * 8);
      pagemap.seekSync(mapping.start / PAGE * 8, Deno.SeekMode.Start);
      let done = 0;
      while (done < entries.length) done += pagemap.readSync(entries.subarray(done)) ?? entries.length;
      const view = new DataView(entries.buffer);
      for (let page = 0; page < pages; page++) {
        // Bit 63 of an entry: the page is present in memory.
        if ((view.getUint32(page * 8 + 4, true) & 0x80000000) === 0) continue;
        const at = mapping.offset + page * PAGE;
        const section = sections.find((each) => each.start <= at && at < each.end)?.name ?? "(between sections)";
        resident.set(section, (resident.get(section) ?? 0) + PAGE);
      }
    }
  } finally {
    pagemap.close();
  }
  return resident;
}
