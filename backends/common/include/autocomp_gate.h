// autocomp_gate.h — the judge's check of a candidate's compiled object (C++17, ELF64 x86-64).
//
// The candidate is compiled alone (-c -fPIC). Its object file says what the code can reach, however
// the source spells it (macros, token pasting, digraphs, function pointers, strings, asm):
//   - defined global symbols: the problem's entry points, plus what the compiler emits for inline
//     C++ code (weak definitions of mangled names in COMDAT groups); nothing else, so no libc
//     function or harness symbol is replaced;
//   - undefined symbols: a per-target allow-list (libm, memory intrinsics, the C++ runtime that
//     inline code needs), threads only where the problem allows them, and the symbols the problem's
//     allowed libraries export;
//   - no code that runs by itself: init/fini/ctors/dtors sections, ifunc resolvers, exit hooks
//     (atexit and friends are simply not on the allow-list);
//   - no raw system call instruction and no valgrind client request in executable sections.
// The file is untrusted data: every offset is checked against its size before it is read.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace autocomp {
namespace gate {

struct Finding {
    std::string flag;
    std::string message;
};

struct Symbol {
    std::string name;
    unsigned bind = 0, type = 0, visibility = 0;
    std::uint16_t shndx = 0;
};

struct Section {
    std::string name;
    std::uint32_t type = 0;
    std::uint64_t flags = 0, offset = 0, size = 0;
};

struct Object {
    std::vector<Section> sections;
    std::vector<Symbol> symbols;
    std::set<std::uint16_t> group_members;  // sections that belong to a COMDAT group
    std::string error;
};

inline bool in_range(std::uint64_t off, std::uint64_t len, std::size_t size) {
    return off <= size && len <= size - off;
}

inline std::string c_string(const std::string& data, std::uint64_t table_off, std::uint64_t table_size, std::uint64_t at) {
    if (at >= table_size)
        return "<bad name>";
    const std::size_t start = static_cast<std::size_t>(table_off + at);
    const std::size_t limit = static_cast<std::size_t>(table_off + table_size);
    std::size_t end = start;
    while (end < limit && data[end] != '\0')
        ++end;
    return data.substr(start, std::min<std::size_t>(end - start, 512));
}

// Reads the section headers, the symbol table and the COMDAT groups of a relocatable object (or,
// for `dynamic`, the .dynsym of a shared library).
// `machine`: EM_X86_64 for the CPU targets, EM_RISCV for rvv (whose judge shares this gate).
inline Object parse(const std::string& data, bool dynamic = false, std::uint16_t machine = EM_X86_64) {
    Object o;
    if (data.size() < sizeof(Elf64_Ehdr) || std::memcmp(data.data(), ELFMAG, SELFMAG) != 0) {
        o.error = "not an ELF file";
        return o;
    }
    Elf64_Ehdr eh;
    std::memcpy(&eh, data.data(), sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != machine) {
        o.error = machine == EM_X86_64 ? "not an x86-64 ELF64 object" : "not an ELF64 object for this target's machine";
        return o;
    }
    if (!dynamic && eh.e_type != ET_REL) {
        o.error = "not a relocatable object (compile with -c)";
        return o;
    }
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 65000 ||
        !in_range(eh.e_shoff, std::uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr), data.size()) ||
        eh.e_shstrndx >= eh.e_shnum) {
        o.error = "malformed section header table";
        return o;
    }
    std::vector<Elf64_Shdr> sh(eh.e_shnum);
    std::memcpy(sh.data(), data.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
    const Elf64_Shdr& names = sh[eh.e_shstrndx];
    if (names.sh_type != SHT_STRTAB || !in_range(names.sh_offset, names.sh_size, data.size())) {
        o.error = "malformed section name table";
        return o;
    }
    for (const auto& s : sh) {
        Section sec;
        sec.name = c_string(data, names.sh_offset, names.sh_size, s.sh_name);
        sec.type = s.sh_type;
        sec.flags = s.sh_flags;
        sec.offset = s.sh_offset;
        sec.size = s.sh_type == SHT_NOBITS ? 0 : s.sh_size;
        if (sec.size > 0 && !in_range(sec.offset, sec.size, data.size())) {
            o.error = "section " + sec.name + " lies outside the file";
            return o;
        }
        o.sections.push_back(sec);
    }
    for (std::size_t i = 0; i < sh.size(); ++i) {
        const auto& s = sh[i];
        if (s.sh_type == SHT_GROUP && s.sh_size >= 4 && s.sh_size % 4 == 0) {
            std::vector<std::uint32_t> words(s.sh_size / 4);
            std::memcpy(words.data(), data.data() + s.sh_offset, s.sh_size);
            if (words[0] & GRP_COMDAT)
                for (std::size_t w = 1; w < words.size(); ++w)
                    if (words[w] < sh.size())
                        o.group_members.insert(static_cast<std::uint16_t>(words[w]));
        }
        if (s.sh_type != (dynamic ? SHT_DYNSYM : SHT_SYMTAB))
            continue;
        if (s.sh_entsize != sizeof(Elf64_Sym) || s.sh_link >= sh.size()) {
            o.error = "malformed symbol table";
            return o;
        }
        const Elf64_Shdr& strtab = sh[s.sh_link];
        if (!in_range(strtab.sh_offset, strtab.sh_size, data.size())) {
            o.error = "malformed symbol name table";
            return o;
        }
        const std::size_t count = s.sh_size / sizeof(Elf64_Sym);
        for (std::size_t k = 1; k < count; ++k) {
            Elf64_Sym sym;
            std::memcpy(&sym, data.data() + s.sh_offset + k * sizeof(Elf64_Sym), sizeof sym);
            Symbol out;
            out.name = c_string(data, strtab.sh_offset, strtab.sh_size, sym.st_name);
            out.bind = ELF64_ST_BIND(sym.st_info);
            out.type = ELF64_ST_TYPE(sym.st_info);
            out.visibility = ELF64_ST_VISIBILITY(sym.st_other);
            out.shndx = sym.st_shndx;
            o.symbols.push_back(out);
        }
    }
    return o;
}

// Undefined symbols any candidate may use: libm, memory intrinsics and the C++ runtime that inline
// library code (std::vector, std::array, <algorithm>, exceptions) calls.
inline bool allowed_undefined(const std::string& name, bool threads) {
    static const std::set<std::string> exact{
        "memcpy", "memmove", "memset", "memcmp", "__memcpy_chk", "__memmove_chk", "__memset_chk",
        "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign",
        "abort", "__assert_fail", "__stack_chk_fail", "_GLOBAL_OFFSET_TABLE_", "__tls_get_addr",
        "__cxa_begin_catch", "__cxa_end_catch", "__cxa_rethrow", "__cxa_allocate_exception", "__cxa_free_exception",
        "__cxa_throw", "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort", "__cxa_pure_virtual",
        "__gxx_personality_v0", "_Unwind_Resume", "__cpu_indicator_init", "__cpu_model", "__cpu_features2",
        "_ZSt9terminatev", "__dso_handle",
        // libm
        "sqrt", "sqrtf", "sqrtl", "cbrt", "cbrtf", "exp", "expf", "expl", "exp2", "exp2f", "expm1", "expm1f",
        "log", "logf", "logl", "log2", "log2f", "log10", "log10f", "log1p", "log1pf", "pow", "powf", "powl",
        "sin", "sinf", "cos", "cosf", "tan", "tanf", "sincos", "sincosf", "asin", "asinf", "acos", "acosf",
        "atan", "atanf", "atan2", "atan2f", "sinh", "sinhf", "cosh", "coshf", "tanh", "tanhf", "asinh", "asinhf",
        "acosh", "acoshf", "atanh", "atanhf", "erf", "erff", "erfc", "erfcf", "tgamma", "tgammaf", "lgamma",
        "lgammaf", "fabs", "fabsf", "fmod", "fmodf", "remainder", "remainderf", "fma", "fmaf", "fmax", "fmaxf",
        "fmin", "fminf", "floor", "floorf", "ceil", "ceilf", "trunc", "truncf", "round", "roundf", "lround",
        "lroundf", "llround", "llroundf", "rint", "rintf", "lrint", "lrintf", "llrint", "llrintf", "nearbyint",
        "nearbyintf", "frexp", "frexpf", "ldexp", "ldexpf", "scalbn", "scalbnf", "modf", "modff", "hypot", "hypotf",
        "copysign", "copysignf", "nextafter", "nextafterf", "__expf_finite", "__logf_finite", "__exp_finite",
        "__log_finite", "__powf_finite", "__sqrtf_finite", "_ZdlPv", "_ZdaPv", "_Znwm", "_Znam", "_ZdlPvm",
        "_ZdaPvm", "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t", "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t",
        "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
        "_ZTVN10__cxxabiv117__class_type_infoE", "_ZTVN10__cxxabiv120__si_class_type_infoE",
        "_ZTVN10__cxxabiv121__vmi_class_type_infoE", "_ZTISt9exception", "_ZNSt9exceptionD2Ev",
        "_ZNKSt9exception4whatEv", "_ZTISt12length_error", "_ZTISt9bad_alloc"};
    if (exact.count(name))
        return true;
    // libgcc's arithmetic helpers (__popcountdi2, __mulsc3, __extendhfsf2, __divti3, ...).
    static const std::regex libgcc(
        "__(popcount|clz|ctz|ffs|parity|bswap|mul|div|add|sub|neg|pow|extend|trunc|fixuns|fix|floatun|float|cmp|"
        "ucmp|unord|eq|ne|ge|gt|le|lt|ashl|ashr|lshr|mod|umod|udiv|udivmod|divmod)[a-z]*[0-9]");
    // The C++ library's throw helpers that inline containers call (std::__throw_length_error, ...).
    static const std::regex throws("_ZSt[0-9]+__throw_[a-z_]+P?K?c?v?");
    // Out-of-line parts of the C++ library's containers (std::map/set trees, std::list nodes, the
    // unordered containers' rehash policy): pure computation on the caller's memory.
    static const std::regex containers("_ZSt[0-9]+_Rb_tree_[A-Za-z0-9_]+|_ZNSt8__detail15_List_node_base[A-Za-z0-9_]+|"
                                       "_ZNKSt8__detail20_Prime_rehash_policy[A-Za-z0-9_]+|_ZNSt8__detail12__prime_list[A-Za-z0-9_]*");
    if (std::regex_match(name, libgcc) || std::regex_match(name, throws) || std::regex_match(name, containers))
        return true;
    if (threads) {
        static const std::regex thread_api("pthread_[a-z_]+|_ZNSt6thread.*|_ZT[IVS]NSt6thread.*|sched_yield|"
                                           "_ZSt15__once_callable|_ZSt11__once_call|__once_proxy|"
                                           "_ZNSt18condition_variable[A-Za-z0-9_]+|_ZNSt6thread20hardware_concurrencyEv|"
                                           "nanosleep|clock_nanosleep|__errno_location|get_nprocs");
        if (std::regex_match(name, thread_api))
            return true;
    }
    return false;
}

struct Options {
    std::vector<std::string> entries;            // the problem's entry points
    bool threads = false;                        // the problem allows threads
    std::set<std::string> library_symbols;       // exported by the problem's allowed libraries
    std::uint16_t machine = EM_X86_64;           // the ELF machine the object must be built for
};

inline bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Byte patterns in executable sections that no compiled kernel needs.
inline void scan_code(const std::string& data, const Section& s, std::vector<Finding>& out) {
    // valgrind's client-request preamble on amd64: rol $3,%rdi; rol $13,%rdi; rol $61,%rdi; rol $51,%rdi.
    static const unsigned char preamble[] = {0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d,
                                             0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33};
    const std::string code = data.substr(static_cast<std::size_t>(s.offset), static_cast<std::size_t>(s.size));
    if (code.find(std::string(reinterpret_cast<const char*>(preamble), sizeof preamble)) != std::string::npos)
        out.push_back({"valgrind client request", "section " + s.name + " contains a valgrind client request, which "
                                                  "would change what callgrind counts"});
}

inline std::vector<Finding> check(const std::string& data, const Options& opt) {
    std::vector<Finding> out;
    const Object o = parse(data, false, opt.machine);
    if (!o.error.empty()) {
        out.push_back({"unreadable object", "the compiled candidate could not be read: " + o.error});
        return out;
    }
    for (std::size_t i = 0; i < o.sections.size(); ++i) {
        const Section& s = o.sections[i];
        const bool init = s.type == SHT_INIT_ARRAY || s.type == SHT_FINI_ARRAY || s.type == SHT_PREINIT_ARRAY ||
                          s.name == ".init" || s.name == ".fini" || starts_with(s.name, ".init_array") ||
                          starts_with(s.name, ".fini_array") || starts_with(s.name, ".preinit_array") ||
                          starts_with(s.name, ".ctors") || starts_with(s.name, ".dtors") ||
                          starts_with(s.name, ".init.") || starts_with(s.name, ".fini.");
        if (init)
            out.push_back({"code that runs by itself (constructor/destructor)",
                           "section " + s.name + " runs code when the object is loaded or unloaded; a kernel runs "
                           "only when it is called (no global objects with constructors, no "
                           "__attribute__((constructor)))"});
        if ((s.flags & SHF_EXECINSTR) && s.size > 0)
            scan_code(data, s, out);
    }
    std::set<std::string> reported;
    auto once = [&](const std::string& flag, const std::string& key, const std::string& msg) {
        if (reported.insert(flag + "|" + key).second)
            out.push_back({flag, msg});
    };
    std::set<std::string> defined_entries;
    for (const Symbol& s : o.symbols) {
        if (s.type == STT_GNU_IFUNC)
            once("code that runs by itself (ifunc resolver)", s.name,
                 "'" + s.name + "' is an ifunc, whose resolver runs while the object is loaded");
        if (s.type == STT_SECTION || s.type == STT_FILE || s.name.empty())
            continue;
        const bool global = s.bind == STB_GLOBAL || s.bind == STB_WEAK || s.bind == STB_GNU_UNIQUE;
        if (!global)
            continue;
        if (s.shndx == SHN_UNDEF) {
            if (allowed_undefined(s.name, opt.threads) || opt.library_symbols.count(s.name))
                continue;
            const bool thread_api = starts_with(s.name, "pthread_") || starts_with(s.name, "_ZNSt6thread");
            once(thread_api ? "threads are not allowed for this problem" : "calls outside the allowed set", s.name,
                 "uses '" + s.name + "'" +
                     (thread_api ? ": this problem does not allow threads (the benchmark runs on one CPU)"
                                 : ", which is not among the functions a kernel may call (libm, memory intrinsics, "
                                   "the C++ runtime" + std::string(opt.library_symbols.empty() ? "" : ", the problem's libraries") +
                                   "): no files, processes, clocks, environment, signals or dynamic loading"));
            continue;
        }
        if (std::find(opt.entries.begin(), opt.entries.end(), s.name) != opt.entries.end()) {
            defined_entries.insert(s.name);
            continue;
        }
        // Inline C++ code: weak (or unique) definitions of mangled names in COMDAT groups.
        const bool comdat = s.shndx < o.sections.size() && o.group_members.count(s.shndx);
        // Hidden ones (DW.ref.__gxx_personality_v0 for exception tables) are not even exported.
        if ((s.bind == STB_WEAK || s.bind == STB_GNU_UNIQUE) && comdat &&
            (starts_with(s.name, "_Z") || s.visibility == STV_HIDDEN))
            continue;
        once("defines a global symbol besides the entry points", s.name,
             "defines the global symbol '" + s.name + "'; a candidate defines only " +
                 [&] {
                     std::string names;
                     for (const auto& e : opt.entries)
                         names += (names.empty() ? "" : ", ") + e;
                     return names;
                 }() + " (make helpers static or put them in an anonymous namespace)");
    }
    for (const auto& e : opt.entries)
        if (!defined_entries.count(e))
            out.push_back({"entry point missing", "the candidate does not define '" + e + "' with C linkage "
                                                  "(extern \"C\")"});
    return out;
}

// Symbols a shared library exports (its .dynsym, defined entries only).
inline std::set<std::string> exported_symbols(const std::string& data) {
    std::set<std::string> out;
    const Object o = parse(data, true);
    for (const Symbol& s : o.symbols)
        if (s.shndx != SHN_UNDEF && (s.bind == STB_GLOBAL || s.bind == STB_WEAK) &&
            (s.type == STT_FUNC || s.type == STT_OBJECT || s.type == STT_GNU_IFUNC))
            out.insert(s.name);
    return out;
}

} // namespace gate
} // namespace autocomp
