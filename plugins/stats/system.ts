// Facts about the host, read once: CPUs and memory from node:os, cache size and hypervisor from /proc/cpuinfo,
// the virtualisation product from DMI or /sys/hypervisor when the kernel offers them.
import { cpus, release, totalmem, type as osType } from 'node:os'

export interface SystemDescription {
  VirtSystem: string
  VirtRole: string
  CPUCount: number
  CPUModel: string
  CPUMhz: string
  CPUCache: string
  TotalMemoryMB: number
  SystemVersion: string
}

async function readText(path: string): Promise<string> {
  try {
    return (await Bun.file(path).text()).trim()
  } catch {
    return ''
  }
}

/** The first value of a `name : value` line of /proc/cpuinfo. */
function cpuinfoField(cpuinfo: string, name: string): string {
  const m = new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(cpuinfo)
  return m?.[1]?.trim() ?? ''
}

export async function describeSystem(): Promise<SystemDescription> {
  const list = cpus()
  const cpuinfo = await readText('/proc/cpuinfo')
  const guest = /^flags\s*:.*\bhypervisor\b/m.test(cpuinfo)
  const product = (await readText('/sys/hypervisor/type')) || (await readText('/sys/class/dmi/id/product_name')) || (await readText('/sys/class/dmi/id/sys_vendor'))
  const mhz = cpuinfoField(cpuinfo, 'cpu MHz') || (list[0]?.speed ? String(list[0].speed) : '')
  return {
    VirtSystem: product || (guest ? 'unknown hypervisor' : 'none'),
    VirtRole: guest ? 'guest' : product ? 'host' : 'none',
    CPUCount: list.length,
    CPUModel: list[0]?.model.trim() ?? cpuinfoField(cpuinfo, 'model name'),
    CPUMhz: mhz,
    CPUCache: cpuinfoField(cpuinfo, 'cache size'),
    TotalMemoryMB: Math.round(totalmem() / 1024 / 1024),
    SystemVersion: `${osType()} ${release()}`,
  }
}
