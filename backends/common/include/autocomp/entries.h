// autocomp/entries.h — the kernel's entry points as a problem's harness declares them (C++17).
//
// Part of the judge kit (backends/common/include). A harness registers each entry point by name once,
// at static initialization (a target's AUTOCOMP_ENTRY-style macro calls register_entry). The judge
// uses the names (the gate allows exactly these as the candidate's defined globals; callgrind and
// the `entries` mode list them); a worker also gets the address of the function pointer that the
// symbol looked up in the candidate's shared object goes into (nullptr in the judge).
#pragma once

#include <vector>

namespace autocomp {

// Entry points declared by harness.cpp with AUTOCOMP_ENTRY: their names (the gate allows exactly
// these as the candidate's defined globals, callgrind counts from them) and, in the worker, the
// function-pointer slot that the symbol looked up in the candidate's shared object goes into.
struct Entry {
    const char* name;
    void* slot;  // address of the function pointer (worker), nullptr in the judge
};

inline std::vector<Entry>& entries() {
    static std::vector<Entry> s_entries;
    return s_entries;
}

inline int register_entry(const char* name, void* slot) {
    entries().push_back({name, slot});
    return 0;
}

} // namespace autocomp
