#pragma once

#include <QList>
#include <QMap>
#include <QPair>
#include <QString>
#include <QStringList>

namespace autocomp {

// One step of a backend's evaluation (DESIGN.md §5).
struct TargetStep
{
    QString name;
    QStringList run; // argument list with placeholders, no shell
    int timeoutS = 60;
    bool parallel = true; // may run beside other candidates' steps
    bool exclusive = false; // needs a benchmark slot for itself
    QString failStatus; // status when this step exits non-zero: compile_error | incorrect | crash
    // Setup steps only: skip the step when this (expanded) path exists, a per-machine cache.
    QString creates;
    // A failure is logged and the evaluation goes on (setup: e.g. no vendor library; a candidate's
    // step: its note is added to the result's feedback, e.g. no valgrind for the cache profile).
    bool optional = false;
    // Setup steps only: run only when this (expanded) path exists, e.g. a problem's vendor kernel.
    QString onlyIfExists;
    // Runs only when this evaluation option is on (EvaluationConfig; "profile" is the one there is).
    QString option;
    // "candidate" (default): runs what the candidate wrote or builds it; writes only {workdir}, in its
    // own pid namespace. "judge": trusted code from the per-machine cache; reads {workdir}, writes
    // only {judgedir}, where result.json is taken from.
    QString role = QStringLiteral("candidate");
    // Judge steps only: the processes the judge drives through shared memory (DESIGN.md §5): the
    // candidate's, and the baseline's when the evaluation has a baseline.
    QStringList worker;
    QStringList baselineWorker;
    QString workerWritable; // a directory the workers may write (e.g. for callgrind's file)
    // Runs the target's hardware (a GPU kernel, a timed run): not run when backend.yaml's
    // hardware_check fails or with evaluation.compile_only; the evaluation then ends with the status
    // no_hardware after the steps before it (compile, static feedback).
    bool needsHardware = false;
    // The step (and its workers) may use the GPU: NVIDIA device files in the sandbox, no address-space
    // limit (ProcessLimits::gpu).
    bool gpu = false;
    // A candidate step whose output directory (under {workdir}) is kept in the per-machine cache under
    // a key (`reuse: {key: "{candidate_hash}-{machine}", output: "{workdir}/ext"}`): the evaluator, not
    // the candidate, stores it after the step succeeds and copies it back instead of running the step
    // again for the same key (a 25 s torch extension build of the same file).
    QString reuseKey;
    QString reuseOutput;
    bool judge() const { return role == QLatin1String("judge"); }
};

// A target: backends/<name>/backend.yaml.
struct Target
{
    QString name;
    QString dir; // absolute
    QString description;
    QString language = QStringLiteral("cpp");
    QString fileExtension = QStringLiteral("cpp");
    QString metric = QStringLiteral("latency_ms");
    QString metricUnit = QStringLiteral("ms"); // backend.yaml `unit:`, shown with every value of the metric
    // backend.yaml `noise_floor:` (a fraction, 0 by default): how much separate evaluations of the same machine
    // code differ on this target beyond one evaluation's own interval (for a wall-clock metric, new processes
    // and buffers each time). 0 for a deterministic metric (an instruction count). Runs record it with each
    // timed candidate (metrics.noise_floor) and widen its interval by it; search.noise_floor overrides it.
    double noiseFloor = 0;
    // How the metric is measured, in words, for prompts (backend.yaml `measurement:`, with {setting}
    // placeholders expanded); empty: "Measured on the target hardware".
    QString measurement;
    QString requires_; // what the target needs, in words
    // Programs that must be on PATH for the target to be available (backend.yaml `available_if:`, a
    // name or a list). A target missing one is listed as absent and refuses to evaluate.
    QStringList availableIf;
    // A command (backend.yaml `available_check:`, an argument list with placeholders) that exits 0
    // when the target can be used here, e.g. a Python probe for torch with CUDA. Non-zero: the target
    // is absent, and the command's last line of output says why. Run once per process.
    QStringList availableCheck;
    // A command (backend.yaml `hardware_check:`) that exits 0 when the hardware the timed steps need is
    // present (a GPU). Non-zero: the target is usable, but steps with needs_hardware are not run and
    // evaluations end with the status no_hardware. Run once per process.
    QStringList hardwareCheck;
    // Target settings (backend.yaml `settings: {vlen: 256}`), in file order: each is a {name}
    // placeholder in steps and in `measurement`; AUTOCOMP_<TARGET>_<NAME> in the environment
    // overrides the value (e.g. AUTOCOMP_RVV_VLEN=512).
    QList<QPair<QString, QString>> settings;
    QList<TargetStep> steps;
    // Run once per evaluator and problem before its first candidate, with {cache_dir} writable:
    // machine measurements (roofline, vendor library baselines) cached across runs.
    QList<TargetStep> setupSteps;
    // backend.yaml `reference_tree: N`: a reference outside its problem's folder needs its surroundings
    // (the GPU MODE task's task.yml, ../eval.py): the folder N levels above the reference file (1: its
    // own folder) goes with it to another machine. 0: the file alone.
    int referenceTree = 0;
    // backend.yaml `sandbox_read_only:`: further paths (placeholders allowed, e.g. "{backend_dir}/../cpu",
    // "/etc/OpenCL/vendors", "{python}/../..") shown read-only to every sandboxed setup, judge and
    // candidate step and to the availability and hardware checks, beside the target's own folder.
    QStringList sandboxReadOnly;
    // Environment of every step (backend.yaml `env:`), besides PATH, LANG, TMPDIR and HOME.
    QMap<QString, QString> environment;

    // The programs of availableIf that are not on PATH; empty when the target is available.
    QStringList missingPrograms() const;
    bool available() const { return absenceReason().isEmpty(); }
    // Why the hardware_check failed ("no CUDA device: ..."); empty when there is none or it passed.
    QString hardwareAbsence() const;
    // A check command with the target's placeholders expanded ({backend_dir}, settings, {env:NAME}).
    QStringList expandCheck(const QStringList &command) const;
    // Runs a check once per process (cached by its arguments): empty when it exited 0, else the reason.
    // Sandboxed (Sandbox::available()) like the steps: it sees the system, `readOnly` and the folders of
    // the paths it names, and writes only a temporary folder of its own (its HOME); `gpu`: the device files.
    static QString runCheck(const QStringList &command, const QMap<QString, QString> &environment,
                            const QStringList &readOnly = {}, bool gpu = false);
    // What every sandboxed command of this target may read besides the system: its own folder (and the
    // real one, when it is reached through a link), sandboxReadOnly, expanded, and its tools' installations
    // (tools()); only those that exist.
    QStringList sandboxReadOnlyDirs() const;
    // The target's tools wherever the user has them: each program it names (available_if, the first word of
    // every step, a setting that is a program's path) found on the caller's PATH or at the setting's path,
    // and each setting that names a directory. Tools outside the system's folders go on the steps' PATH
    // (pathDirs, before /usr/local/bin:/usr/bin:/bin) and are shown read-only in the sandbox with their
    // installation (readOnly: for .../bin/tool, the whole prefix, so a toolchain finds its libexec and a
    // simulator its extension libraries; never the user's home or a folder holding this program's data).
    struct Tool
    {
        QString name; // as the target names it (spike, riscv64-unknown-elf-gcc, a setting's name)
        QString path; // where it was found; empty: not found
    };
    struct ToolView
    {
        QList<Tool> tools;
        QStringList pathDirs;
        QStringList readOnly;
    };
    ToolView toolView() const;
    // Where its tools were found when that is outside the system's folders ("spike at /opt/chipyard/bin/spike"),
    // and which were not found ("spike not found"): what `autocomp targets` and the New Run dialog show.
    QStringList toolNotes() const;
    // The environment of the availability and hardware checks: the target's env and the steps' PATH.
    QMap<QString, QString> checkEnvironment() const;
    // "absent: needs clang++-16, qemu-riscv64 (requires: ...)" for messages; empty when available.
    QString absenceReason() const;
    // The environment variable that overrides a setting: AUTOCOMP_RVV_VLEN for (rvv, vlen).
    static QString settingVariable(const QString &target, const QString &setting);
};

} // namespace autocomp
