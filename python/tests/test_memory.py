# SPDX-License-Identifier: MIT
"""ringtrace.mem_alloc and mem_free: each an instant in category "memory", and the
device's bytes in use as the counter the writer keeps, read back in order."""

import threading

import pytest

import ringtrace


def memory_lines(trace):
    """(kind, args) of the memory instants and counters, in file order."""
    out = []
    for e in trace.user():
        if e["ph"] == "i" and e.get("cat") == "memory":
            out.append((e["name"], e["args"]))
        elif e["ph"] == "C" and e["name"].startswith("memory "):
            out.append((e["name"], e["args"]))
    return out


def test_allocations_and_frees_keep_each_devices_bytes_in_use(recording):
    recording.start()
    host, gpu = ringtrace.MEM_HOST, 1
    assert host == -1
    ringtrace.mem_alloc(host, 0x7F0000001000, 4096)
    ringtrace.mem_alloc(gpu, 0x10000, 1 << 30)
    ringtrace.mem_alloc(host, 0x7F0000003000, 100)
    ringtrace.mem_free(host, 0x7F0000001000)
    ringtrace.mem_free(gpu, 0x10000)
    ringtrace.mem_free(host, 0xDEAD)  # never allocated: counts 0 bytes
    ringtrace.mem_alloc(gpu, 2**64 - 4096, 2**40)  # the top of the address space
    trace = recording.stop()

    def alloc(addr, size, device):
        return ("alloc", {"addr": hex(addr), "bytes": size, "device": device})

    def free(addr, size, device):
        return ("free", {"addr": hex(addr), "bytes": size, "device": device})

    def in_use(device, total):
        name = "memory host" if device == host else f"memory device {device}"
        return (name, {"bytes_in_use": total})

    assert memory_lines(trace) == [
        alloc(0x7F0000001000, 4096, host), in_use(host, 4096),
        alloc(0x10000, 1 << 30, gpu), in_use(gpu, 1 << 30),
        alloc(0x7F0000003000, 100, host), in_use(host, 4196),
        free(0x7F0000001000, 4096, host), in_use(host, 100),
        free(0x10000, 1 << 30, gpu), in_use(gpu, 0),
        free(0xDEAD, 0, host), in_use(host, 100),
        alloc(2**64 - 4096, 2**40, gpu), in_use(gpu, 2**40),
    ]
    tid = threading.get_native_id()
    assert all(e["pid"] == trace.pid and e["tid"] == tid for e in trace.user())
    assert recording.stats["events_recorded"] == 7


def test_a_free_on_another_thread_finds_its_allocation_written_before(recording):
    recording.start()
    ringtrace.mem_alloc(0, 0x5000, 512)
    # The writer pairs a free with its allocation as it drains the threads' rings, one
    # ring after another: unless the allocation is written before the other thread's
    # free is drained, the free's own bytes are 0 (the counter is right either way:
    # docs/api.md, test_memstack).
    ringtrace.flush()
    t = threading.Thread(target=ringtrace.mem_free, args=(0, 0x5000))
    t.start()
    t.join()
    trace = recording.stop()
    assert memory_lines(trace)[-2:] == [
        ("free", {"addr": "0x5000", "bytes": 512, "device": 0}),
        ("memory device 0", {"bytes_in_use": 0}),
    ]
    assert trace.of("i", "memory", "free")[0]["tid"] != trace.of("i", "memory", "alloc")[0]["tid"]


def test_the_category_filter_and_a_stopped_recorder_leave_them_out(recording):
    ringtrace.mem_alloc(ringtrace.MEM_HOST, 0x1000, 1)  # stopped: nothing
    recording.start(categories="-memory")
    ringtrace.mem_alloc(ringtrace.MEM_HOST, 0x2000, 1)
    ringtrace.instant("app", "kept")
    trace = recording.stop()
    assert [e["name"] for e in trace.user()] == ["kept"]


def test_bad_devices_addresses_and_sizes_raise(recording):
    recording.start()
    with pytest.raises(ValueError, match=r"mem_alloc\(\): the device is MEM_HOST"):
        ringtrace.mem_alloc(-2, 0x1000, 1)
    with pytest.raises(ValueError, match="the device is MEM_HOST"):
        ringtrace.mem_free(2**31, 0x1000)
    with pytest.raises(TypeError, match="the device must be an int, not bool"):
        ringtrace.mem_alloc(True, 0x1000, 1)
    with pytest.raises(ValueError, match=r"mem_alloc\(\): addr is an int from 0"):
        ringtrace.mem_alloc(0, -1, 1)
    with pytest.raises(ValueError, match="bytes is an int from 0"):
        ringtrace.mem_alloc(0, 0x1000, 2**64)
    with pytest.raises(TypeError, match="addr must be an int, not str"):
        ringtrace.mem_free(0, "0x1000")
    with pytest.raises(TypeError, match=r"mem_free\(\) takes 2 positional"):
        ringtrace.mem_free(0)
    trace = recording.stop()
    assert trace.user() == []
