"""What smartctl, the drives and udev say about a disk: the one table of disk facts.

Pure module: no Django, no I/O, no imports of Vigil's. Every fact the smartctl parser, the disk
judgement and the replacement advice rely on is a row of ``FACTS`` with its source and the date
it was read (2026-11-26, through the ``search`` tool), as ``kernel.py`` is for md. The
thresholds Vigil applies to these facts are its own choice, not vendor figures: they are data
(``disks.DiskThresholds``, ``VIGIL_RAID_DISK_*``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ATA", "EXIT_BITS", "FACTS", "MIN_SMARTCTL"]


@dataclass(frozen=True)
class Fact:
    what: str
    source: str
    read: str = "2026-11-26"


_SMARTCTL_H = "https://smartmontools.org/static/doxygen/smartctl_8h_source.html (SVN r5716)"
_SMARTCTL_8 = (
    "https://github.com/smartmontools/smartmontools/blob/fa7a1f3c5d58d8ee3cb63b2f07ccb498e9271ee8"
    "/smartmontools/smartctl.8.in"
)
_SMARTD_CONF_5 = (
    "https://github.com/smartmontools/smartmontools/blob/331c4b5b8cf70f17b94ac85ea04866928ead7531"
    "/smartmontools/smartd.conf.5.in"
)
_SMARTMONTOOLS_NEWS = (
    "https://github.com/smartmontools/smartmontools/blob/aefaf6e7633e64f8da68d28ee18b01ee600f5428"
    "/smartmontools/NEWS"
)
_NETDATA_SCSI = (
    "https://github.com/netdata/netdata/blob/34e396c7ce215f08b9670164dc061453fe9f26b6"
    "/src/go/plugin/go.d/modules/smartctl/testdata/type-scsi/device-sda.json"
)
_SYSTEMD = "https://github.com/systemd/systemd/blob"

FACTS: dict[str, Fact] = {
    "json": Fact(
        "smartctl prints JSON with -j/--json since smartmontools 7.0 (2018-12-30); an older "
        "smartctl refuses the option and prints text, which Vigil reports as 'not JSON: "
        "smartmontools older than 7.0?'. Key names changed over versions (SCSI vendor and "
        "product became scsi_vendor, scsi_product, scsi_model_name in 7.3): both are read.",
        f"smartctl(8) '-j, --json', {_SMARTCTL_8}; smartmontools NEWS 7.0, "
        f"{_SMARTMONTOOLS_NEWS}; netdata go.d smartctl testdata (smartctl 7.3 SCSI keys), "
        f"{_NETDATA_SCSI}",
    ),
    "exit-status": Fact(
        "smartctl's exit status is a bit mask: 0 command line did not parse, 1 device open "
        "failed (or in low-power mode, or ATA identify failed), 2 a SMART command failed, 3 "
        "SMART status returned FAILURE ('DISK FAILING'), 4 prefail attributes at or below "
        "threshold, 5 attributes failed in the past, 6 errors in the error log, 7 errors in the "
        "self-test log. The JSON carries it as smartctl.exit_status.",
        f"{_SMARTCTL_H} FAILCMD..FAILLOG",
    ),
    "ata-attributes": Fact(
        "ATA attribute 5 Reallocated_Sector_Ct, 197 Current_Pending_Sector and 198 "
        "Offline_Uncorrectable count sectors by their raw value; smartd reports any non-zero "
        "pending (-C 197) and offline-uncorrectable (-U 198) count by default. Backblaze found "
        "one or more of 5, 187, 188, 197, 198 above zero on 76.7% of failed drives and 4.2% of "
        "working ones.",
        f"smartd.conf(5) -C, -U, {_SMARTD_CONF_5}; "
        "https://www.backblaze.com/blog/what-smart-stats-indicate-"
        "hard-drive-failures/ (2016)",
    ),
    "nvme-health": Fact(
        "The NVMe SMART/Health log (page 02h): critical_warning bits (spare below threshold, "
        "temperature, reliability degraded, read-only, volatile backup failed), "
        "percentage_used (vendor estimate of life used; may exceed 100), media_errors "
        "(unrecovered data integrity errors), available_spare and its threshold.",
        "NVM Express Base Specification 2.0, 5.16.1.3 SMART / Health Information, "
        "https://nvmexpress.org/specifications/ ; smartctl JSON "
        f"nvme_smart_health_information_log, {_SMARTCTL_8}",
    ),
    "scsi-health": Fact(
        "SAS/SCSI disks report health through Informational Exceptions (smart_status), the "
        "grown defect list (scsi_grown_defect_list: blocks reassigned since manufacture) and "
        "the error counter log (total_uncorrected_errors for read, write and verify).",
        f"smartctl(8) '-a' for SCSI, {_SMARTCTL_8}; smartctl JSON scsi_grown_defect_list, "
        f"scsi_error_counter_log, {_NETDATA_SCSI}",
    ),
    "no-smart": Fact(
        "A device that hides SMART says so in different ways: a USB bridge smartctl does not "
        "know ('Unknown USB bridge [0x…]', exit bit 0, no device data); a virtual disk, a "
        "hardware RAID volume or an iSCSI LUN backed by a file or volume answers INQUIRY but "
        "has no SMART ('SMART support is: Unavailable - device lacks SMART capability', "
        "smart_support.available false, or no smart_status at all).",
        "smartmontools issues https://github.com/smartmontools/smartmontools/issues/96 (VMware "
        "Virtual disk), https://github.com/smartmontools/smartmontools/issues/419 (Unknown USB "
        "bridge); https://github.com/prometheus-community/smartctl_exporter/issues/224 "
        "(MegaRAID volume)",
    ),
    "by-id": Fact(
        "udev names each disk under /dev/disk/by-id after its bus, model and serial "
        "(ata-…, scsi-…, nvme-…) and its WWN (wwn-0x…), links that follow the disk when the "
        "kernel name (sdc) changes; a partition's link ends in -partN.",
        f"{_SYSTEMD}/0a601e11c389dc9303bb9022ec0e84669968a6eb/rules.d/60-persistent-storage.rules",
    ),
    "iscsi-path": Fact(
        "udev's path_id names an iSCSI disk under /dev/disk/by-path as "
        "ip-<portal address>:<port>-iscsi-<target IQN>-lun-<n>.",
        f"{_SYSTEMD}/018333725f9d8565a47abc54b7a6e301e8492f39/src/udev/udev-builtin-path_id.c "
        "(handle_scsi_iscsi, format_lun_number)",
    ),
    "mdadm-manage": Fact(
        "mdadm --manage /dev/mdX --fail DEV marks a member faulty, --remove DEV takes a faulty "
        "or spare member out, --add DEV adds a device (as a spare that is rebuilt onto when a "
        "slot is missing); --replace DEV (with --with NEW) copies a working member to a spare "
        "before failing it, keeping the redundancy meanwhile (mdadm 3.3, kernel 3.3).",
        "mdadm(8) MANAGE MODE, https://github.com/md-raid-utilities/mdadm/blob/d1447022/mdadm.8.in",
    ),
}

#: ATA attribute ids (FACTS["ata-attributes"]).
ATA = {"reallocated": 5, "reported_uncorrect": 187, "pending": 197, "offline_uncorrectable": 198}
#: smartctl's exit bits (FACTS["exit-status"]).
EXIT_BITS = {
    0: "the command line did not parse",
    1: "the device could not be opened",
    2: "a SMART command failed",
    3: "SMART status says the disk is failing",
    4: "prefail attributes are at or below threshold",
    5: "attributes were at or below threshold in the past",
    6: "the error log holds errors",
    7: "the self-test log holds errors",
}
#: JSON output appeared in this smartmontools release (FACTS["json"]).
MIN_SMARTCTL = (7, 0)
