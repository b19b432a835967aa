#include "catalog/repository.h"
#include "platform/yaml_reader.h"
#include "platform/data_paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>

#include <algorithm>

namespace autocomp {

namespace {

std::optional<QByteArray> readFile(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    return file.readAll();
}

QString readText(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

bool fail(const YamlReader &r, QString *error)
{
    if (r.ok())
        return false;
    if (error)
        *error = r.errors().join(QLatin1Char('\n'));
    return true;
}

QStringList subdirs(const QString &dir) { return QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name); }

} // namespace

Repository::Repository() : m_dataDirs(DataPaths::searchDirs()) {}

Repository::Repository(QStringList dataDirs) : m_dataDirs(std::move(dataDirs)) {}

QString Repository::userDataDir() { return DataPaths::userDataDir(); }

QString Repository::shippedDataDir() { return DataPaths::shippedDataDir(); }

QString Repository::findDir(const QString &sub, const QString &name) const
{
    for (const QString &base : m_dataDirs) {
        const QString candidate = base + QLatin1Char('/') + sub + QLatin1Char('/') + name;
        if (QFileInfo(candidate).isDir())
            return QFileInfo(candidate).absoluteFilePath();
    }
    return {};
}

QStringList Repository::targetNames() const
{
    QStringList names;
    for (const QString &base : m_dataDirs)
        for (const QString &name : subdirs(base + QStringLiteral("/backends")))
            if (QFileInfo::exists(base + QStringLiteral("/backends/") + name + QStringLiteral("/backend.yaml")))
                names << name;
    names.removeDuplicates();
    names.sort();
    return names;
}

QStringList Repository::problemNames(const QString &target) const
{
    QStringList names;
    for (const QString &base : m_dataDirs) {
        const QString dir = base + QStringLiteral("/sols/") + target;
        for (const QString &name : subdirs(dir)) {
            if (QFileInfo::exists(dir + QLatin1Char('/') + name + QStringLiteral("/problem.yaml"))) {
                names << name;
                continue;
            }
            // One level of grouping, as KernelBench's levels: sols/kernelbench/level1/88_MinGPTNewGelu
            // is the problem "level1/88_MinGPTNewGelu".
            for (const QString &inner : subdirs(dir + QLatin1Char('/') + name))
                if (QFileInfo::exists(dir + QLatin1Char('/') + name + QLatin1Char('/') + inner
                                      + QStringLiteral("/problem.yaml")))
                    names << name + QLatin1Char('/') + inner;
        }
    }
    names.removeDuplicates();
    names.sort();
    return names;
}

QStringList Repository::agentNames() const
{
    QStringList names;
    for (const QString &base : m_dataDirs)
        for (const QString &name : subdirs(base + QStringLiteral("/agents")))
            if (QFileInfo::exists(base + QStringLiteral("/agents/") + name + QStringLiteral("/agent_config.yaml")))
                names << name;
    names.removeDuplicates();
    names.sort();
    return names;
}

std::optional<Target> Repository::target(const QString &name, QString *error) const
{
    const QString dir = findDir(QStringLiteral("backends"), name);
    if (dir.isEmpty()) {
        if (error)
            *error =
                QStringLiteral("unknown target '%1' (known: %2)").arg(name, targetNames().join(QLatin1String(", ")));
        return std::nullopt;
    }
    return loadTarget(dir, error);
}

QString Repository::metricUnitOf(const RunInfo &run) const
{
    const auto t = target(run.target, nullptr);
    return t && t->metric == run.metric ? t->metricUnit : QString();
}

std::optional<Problem> Repository::problem(const QString &target, const QString &name, QString *error) const
{
    // A name is a folder, or a group and a folder ("level1/88_MinGPTNewGelu"); nothing above sols/.
    const QStringList parts = name.split(QLatin1Char('/'));
    const bool plain = parts.size() <= 2 && std::none_of(parts.cbegin(), parts.cend(), [](const QString &part) {
                           return part.isEmpty() || part == QLatin1String(".") || part == QLatin1String("..");
                       });
    const QString dir = plain ? findDir(QStringLiteral("sols/") + target, name) : QString();
    if (dir.isEmpty()) {
        if (error)
            *error = QStringLiteral("unknown problem '%1' for target '%2' (known: %3)")
                         .arg(name, target, problemNames(target).join(QLatin1String(", ")));
        return std::nullopt;
    }
    auto problem = loadProblem(dir, target, error);
    if (problem && parts.size() == 2 && problem->name == parts.last())
        problem->name = name; // the grouped name, as listed
    return problem;
}

std::optional<Agent> Repository::agent(const QString &name, QString *error) const
{
    // The user's edited copy shadows the shipped agent wherever the shipped data comes from.
    const QString user = userDataDir() + QStringLiteral("/agents/") + name;
    const QString dir = QFileInfo::exists(user + QStringLiteral("/agent_config.yaml"))
            && m_dataDirs.contains(userDataDir())
        ? user
        : findDir(QStringLiteral("agents"), name);
    if (dir.isEmpty()) {
        if (error)
            *error = QStringLiteral("unknown agent '%1' (known: %2)").arg(name, agentNames().join(QLatin1String(", ")));
        return std::nullopt;
    }
    return loadAgent(dir, error);
}

QStringList Repository::backendKeys()
{
    return {QStringLiteral("name"),
            QStringLiteral("description"),
            QStringLiteral("language"),
            QStringLiteral("extension"),
            QStringLiteral("metric"),
            QStringLiteral("unit"),
            QStringLiteral("measurement"),
            QStringLiteral("requires"),
            QStringLiteral("available_if"),
            QStringLiteral("available_check"),
            QStringLiteral("hardware_check"),
            QStringLiteral("settings"),
            QStringLiteral("env"),
            QStringLiteral("setup"),
            QStringLiteral("steps"),
            QStringLiteral("reference_tree"),
            QStringLiteral("sandbox_read_only"),
            QStringLiteral("noise_floor")};
}

QStringList Repository::stepKeys()
{
    return {QStringLiteral("name"),
            QStringLiteral("run"),
            QStringLiteral("timeout_s"),
            QStringLiteral("parallel"),
            QStringLiteral("exclusive"),
            QStringLiteral("fail_status"),
            QStringLiteral("optional"),
            QStringLiteral("option"),
            QStringLiteral("only_if_exists"),
            QStringLiteral("role"),
            QStringLiteral("worker"),
            QStringLiteral("baseline_worker"),
            QStringLiteral("worker_writable"),
            QStringLiteral("needs_hardware"),
            QStringLiteral("reuse"),
            QStringLiteral("gpu"),
            QStringLiteral("accelerator")};
}

QStringList Repository::setupStepKeys()
{
    return {QStringLiteral("name"),     QStringLiteral("run"),       QStringLiteral("timeout_s"),
            QStringLiteral("parallel"), QStringLiteral("exclusive"), QStringLiteral("fail_status"),
            QStringLiteral("optional"), QStringLiteral("option"),    QStringLiteral("only_if_exists"),
            QStringLiteral("creates"),  QStringLiteral("gpu"),       QStringLiteral("accelerator")};
}

QStringList Repository::problemKeys()
{
    return {QStringLiteral("name"),         QStringLiteral("description"),
            QStringLiteral("signature"),    QStringLiteral("entry"),
            QStringLiteral("dtype"),        QStringLiteral("start"),
            QStringLiteral("reference"),    QStringLiteral("context"),
            QStringLiteral("shapes"),       QStringLiteral("bench_shape"),
            QStringLiteral("shape_ranges"), QStringLiteral("random_shapes"),
            QStringLiteral("tolerance"),    QStringLiteral("flops"),
            QStringLiteral("bytes"),        QStringLiteral("allow_libraries"),
            QStringLiteral("libraries"),    QStringLiteral("allow_threads"),
            QStringLiteral("format"),       QStringLiteral("level"),
            QStringLiteral("scale")};
}

namespace {

// The parts of a backend.yaml, each read into `t` with its errors reported on `r`.
void readTargetBasics(YamlReader &r, const YAML::Node &n, Target &t)
{
    if (n["name"])
        t.name = r.string(n["name"], QStringLiteral("name")).value_or(t.name);
    if (n["description"])
        t.description = r.string(n["description"], QStringLiteral("description")).value_or(QString());
    if (n["language"])
        t.language = r.string(n["language"], QStringLiteral("language")).value_or(t.language);
    if (n["extension"])
        t.fileExtension = r.string(n["extension"], QStringLiteral("extension")).value_or(t.fileExtension);
    if (n["metric"])
        t.metric = r.string(n["metric"], QStringLiteral("metric")).value_or(t.metric);
    if (n["unit"])
        t.metricUnit = r.string(n["unit"], QStringLiteral("unit")).value_or(t.metricUnit);
    if (const YAML::Node floor = n["noise_floor"]) {
        if (const auto v = r.number(floor, QStringLiteral("noise_floor"))) {
            if (*v < 0 || *v >= 0.5)
                r.error(floor,
                        QStringLiteral("'noise_floor' is a fraction between 0 and 0.5 (e.g. 0.04 for 4 %), not %1")
                            .arg(*v));
            else
                t.noiseFloor = *v;
        }
    }
    if (n["requires"])
        t.requires_ = r.string(n["requires"], QStringLiteral("requires")).value_or(QString());
}

// What says whether the target can run here, and what its steps may read.
void readTargetChecks(YamlReader &r, const YAML::Node &n, Target &t)
{
    if (const YAML::Node avail = n["available_if"]) {
        // One program or a list of them, each a bare name looked up on PATH.
        if (avail.IsSequence())
            t.availableIf = r.stringList(avail, QStringLiteral("available_if")).value_or(QStringList());
        else if (const auto program = r.string(avail, QStringLiteral("available_if")))
            t.availableIf << *program;
        for (const QString &program : std::as_const(t.availableIf))
            if (program.trimmed().isEmpty() || program.contains(QLatin1Char(' ')))
                r.error(avail, QStringLiteral("'available_if' names programs to find on PATH, not '%1'").arg(program));
    }
    for (const char *key : {"available_check", "hardware_check"}) {
        if (const YAML::Node check = n[key]) {
            const QStringList command = r.stringList(check, QLatin1String(key)).value_or(QStringList());
            if (command.isEmpty())
                r.error(check,
                        QStringLiteral("'%1' must be a non-empty argument list, e.g. [python3, -c, \"import torch\"]")
                            .arg(QLatin1String(key)));
            (qstrcmp(key, "available_check") == 0 ? t.availableCheck : t.hardwareCheck) = command;
        }
    }
    if (const YAML::Node extra = n["sandbox_read_only"]) {
        // Absolute paths, or placeholders that expand to one ({backend_dir}/..., a setting).
        t.sandboxReadOnly = r.stringList(extra, QStringLiteral("sandbox_read_only")).value_or(QStringList());
        for (const QString &path : std::as_const(t.sandboxReadOnly))
            if (!path.startsWith(QLatin1Char('/')) && !path.startsWith(QLatin1Char('{')))
                r.error(extra,
                        QStringLiteral(
                            "sandbox_read_only: '%1' must be an absolute path or start with a placeholder such as "
                            "{backend_dir}")
                            .arg(path));
    }
    if (const YAML::Node tree = n["reference_tree"]) {
        t.referenceTree = int(r.integer(tree, QStringLiteral("reference_tree")).value_or(0));
        if (t.referenceTree < 0 || t.referenceTree > 4)
            r.error(tree,
                    QStringLiteral("'reference_tree' must be 0 to 4 (the folders above the reference file that "
                                   "go with it), got %1")
                        .arg(t.referenceTree));
    }
}

// The settings, and what follows them: the measurement's text, the metric and its unit.
void readTargetSettings(YamlReader &r, const YAML::Node &n, Target &t)
{
    if (const YAML::Node settings = n["settings"]) {
        static const QRegularExpression s_name(QStringLiteral("^[a-z][a-z0-9_]*$"));
        // A plain word, or an absolute path of plain words (a tool, e.g. a Python with torch).
        static const QRegularExpression s_value(
            QStringLiteral("^([A-Za-z0-9_.+-]*|(/(?!\\.\\.?(/|$))[A-Za-z0-9_.+-]+)+)$"));
        static const QStringList s_reserved{
            QStringLiteral("backend_dir"), QStringLiteral("problem_dir"), QStringLiteral("problem"),
            QStringLiteral("target"),      QStringLiteral("candidate"),   QStringLiteral("workdir"),
            QStringLiteral("judgedir"),    QStringLiteral("cache_dir"),   QStringLiteral("machine"),
            QStringLiteral("seed"),        QStringLiteral("baseline"),    QStringLiteral("entry"),
            QStringLiteral("kit_dir")};
        if (!settings.IsMap())
            r.error(settings, QStringLiteral("'settings' must be a mapping such as {vlen: 256}"));
        else
            for (const auto &kv : settings) {
                const QString name = fromStd(kv.first.as<std::string>(""));
                if (!s_name.match(name).hasMatch() || s_reserved.contains(name)) {
                    r.error(
                        kv.first,
                        QStringLiteral("settings: '%1' is not a usable setting name (lower case, digits, '_'; not a "
                                       "built-in placeholder)")
                            .arg(name));
                    continue;
                }
                QString value = r.string(kv.second, QStringLiteral("settings.") + name).value_or(QString());
                const QString variable = Target::settingVariable(t.name, name);
                if (qEnvironmentVariableIsSet(variable.toLatin1().constData()))
                    value = qEnvironmentVariable(variable.toLatin1().constData());
                // A tool installed per user (a target's Python environment) lives under the user's
                // data directory, which differs between users and machines (an ssh executor's far host).
                if (value.startsWith(QLatin1String("{data_home}/")))
                    value.replace(0, int(qstrlen("{data_home}")), Repository::userDataDir());
                // Values reach argument lists and file names: a plain word only.
                if (!s_value.match(value).hasMatch())
                    r.error(
                        kv.second,
                        QStringLiteral("settings.%1: '%2' (from %3) must be a plain word (letters, digits, '_', '.', "
                                       "'+', '-') or an absolute path of such words")
                            .arg(name, value,
                                 qEnvironmentVariableIsSet(variable.toLatin1().constData())
                                     ? variable
                                     : QStringLiteral("backend.yaml")));
                t.settings.append({name, value});
            }
    }
    if (n["measurement"]) {
        t.measurement = r.string(n["measurement"], QStringLiteral("measurement")).value_or(QString());
        for (const auto &setting : std::as_const(t.settings))
            t.measurement.replace(QLatin1Char('{') + setting.first + QLatin1Char('}'), setting.second);
    }
    // The metric and its unit may follow a setting (gemmini: `instructions` on spike, `cycles` on FireSim).
    for (const auto &setting : std::as_const(t.settings)) {
        t.metric.replace(QLatin1Char('{') + setting.first + QLatin1Char('}'), setting.second);
        t.metricUnit.replace(QLatin1Char('{') + setting.first + QLatin1Char('}'), setting.second);
    }
    if (t.metric.isEmpty() || t.metric.contains(QLatin1Char('{')) || t.metricUnit.contains(QLatin1Char('{')))
        r.error(n["metric"] ? n["metric"] : n,
                QStringLiteral("'metric: %1' / 'unit: %2': a placeholder there must name one of the "
                               "target's settings, and the metric may not be empty")
                    .arg(t.metric, t.metricUnit));
}

QList<TargetStep> parseSteps(YamlReader &r, const YAML::Node &list, const QString &key, bool setup)
{
    QList<TargetStep> out;
    for (const auto &s : list) {
        r.checkKeys(s, key + QStringLiteral("[]"), setup ? Repository::setupStepKeys() : Repository::stepKeys());
        if (!s.IsMap())
            continue;
        TargetStep step;
        if (s["name"])
            step.name = r.string(s["name"], key + QStringLiteral("[].name")).value_or(QString());
        else
            r.error(s, QStringLiteral("a step needs a 'name'"));
        if (s["run"])
            step.run = r.stringList(s["run"], key + QStringLiteral("[].run")).value_or(QStringList());
        if (step.run.isEmpty())
            r.error(s, QStringLiteral("step '%1' needs a non-empty 'run' argument list").arg(step.name));
        if (s["timeout_s"])
            step.timeoutS = int(
                r.integer(s["timeout_s"], key + QStringLiteral("[].timeout_s")).value_or(step.timeoutS));
        if (s["parallel"])
            step.parallel = r.boolean(s["parallel"], key + QStringLiteral("[].parallel")).value_or(true);
        if (s["exclusive"])
            step.exclusive = r.boolean(s["exclusive"], key + QStringLiteral("[].exclusive")).value_or(false);
        if (s["fail_status"])
            step.failStatus = r.string(s["fail_status"], key + QStringLiteral("[].fail_status")).value_or(QString());
        if (step.failStatus.isEmpty())
            step.failStatus = QStringLiteral("error");
        if (s["creates"])
            step.creates = r.string(s["creates"], key + QStringLiteral("[].creates")).value_or(QString());
        if (s["optional"])
            step.optional = r.boolean(s["optional"], key + QStringLiteral("[].optional")).value_or(false);
        if (s["option"]) {
            step.option = r.string(s["option"], key + QStringLiteral("[].option")).value_or(QString());
            if (step.option != QLatin1String("profile"))
                r.error(s["option"],
                        QStringLiteral("step '%1': unknown option '%2' (the one there is: profile)")
                            .arg(step.name, step.option));
        }
        if (s["only_if_exists"])
            step.onlyIfExists =
                r.string(s["only_if_exists"], key + QStringLiteral("[].only_if_exists")).value_or(QString());
        if (s["role"]) {
            step.role = r.string(s["role"], key + QStringLiteral("[].role")).value_or(step.role);
            if (step.role != QLatin1String("judge") && step.role != QLatin1String("candidate"))
                r.error(s["role"],
                        QStringLiteral("step '%1': role must be 'judge' or 'candidate', not '%2'")
                            .arg(step.name, step.role));
        }
        if (s["worker"])
            step.worker = r.stringList(s["worker"], key + QStringLiteral("[].worker")).value_or(QStringList());
        if (s["baseline_worker"])
            step.baselineWorker =
                r.stringList(s["baseline_worker"], key + QStringLiteral("[].baseline_worker")).value_or(QStringList());
        if (s["worker_writable"])
            step.workerWritable =
                r.string(s["worker_writable"], key + QStringLiteral("[].worker_writable")).value_or(QString());
        // `accelerator` is the general name (GPUs, NeuronCores, TPUs); `gpu` is kept as its first name.
        for (const char *name : {"gpu", "accelerator"})
            if (s[name])
                step.gpu = step.gpu
                    || r.boolean(s[name], key + QStringLiteral("[].") + QLatin1String(name)).value_or(false);
        if (s["needs_hardware"])
            step.needsHardware =
                r.boolean(s["needs_hardware"], key + QStringLiteral("[].needs_hardware")).value_or(false);
        if (const YAML::Node reuse = s["reuse"]) {
            r.checkKeys(reuse, key + QStringLiteral("[].reuse"), {QStringLiteral("key"), QStringLiteral("output")});
            if (!reuse.IsMap() || !reuse["key"] || !reuse["output"]) {
                r.error(reuse, QStringLiteral("step '%1': 'reuse' needs {key: ..., output: ...}").arg(step.name));
            } else {
                step.reuseKey = r.string(reuse["key"], key + QStringLiteral("[].reuse.key")).value_or(QString());
                step.reuseOutput =
                    r.string(reuse["output"], key + QStringLiteral("[].reuse.output")).value_or(QString());
                if (!step.reuseOutput.startsWith(QLatin1String("{workdir}/")))
                    r.error(
                        reuse["output"],
                        QStringLiteral("step '%1': reuse.output must be a directory under {workdir}").arg(step.name));
                if (step.judge())
                    r.error(reuse,
                            QStringLiteral("step '%1': only a candidate step's output is reused").arg(step.name));
            }
        }
        if ((!step.worker.isEmpty() || !step.baselineWorker.isEmpty()) && !step.judge())
            r.error(s, QStringLiteral("step '%1': only a step with role 'judge' drives workers").arg(step.name));
        out << step;
    }
    return out;
}

void readTargetEnvironment(YamlReader &r, const YAML::Node &n, Target &t)
{
    if (const YAML::Node env = n["env"]) {
        // Secrets never reach a step: names that look like one are refused here.
        static const QRegularExpression s_secret(QStringLiteral("KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL"),
                                                 QRegularExpression::CaseInsensitiveOption);
        if (!env.IsMap())
            r.error(env, QStringLiteral("'env' must be a mapping NAME: value"));
        else
            for (const auto &kv : env) {
                const QString name = fromStd(kv.first.as<std::string>(""));
                if (s_secret.match(name).hasMatch())
                    r.error(kv.first,
                            QStringLiteral("env: '%1' looks like a secret; steps never get secrets").arg(name));
                else
                    t.environment.insert(name, r.string(kv.second, QStringLiteral("env.") + name).value_or(QString()));
            }
    }
}

// problem.yaml's shapes (required unless the problem is in another project's format, which carries its own).
void readProblemShapes(YamlReader &r, const YAML::Node &n, Problem &p, bool kernelBench)
{
    if (const auto shapes = n["shapes"]) {
        if (!shapes.IsSequence() || shapes.size() == 0) {
            r.error(shapes, QStringLiteral("'shapes' must be a non-empty list of mappings"));
        } else {
            for (const auto &shape : shapes) {
                if (!shape.IsMap()) {
                    r.error(shape, QStringLiteral("each entry of 'shapes' must be a mapping such as {M: 512}"));
                    continue;
                }
                QVariantMap map;
                for (const auto &kv : shape) {
                    const QString key = fromStd(kv.first.as<std::string>(""));
                    if (auto v = r.integer(kv.second, QStringLiteral("shapes.") + key))
                        map.insert(key, *v);
                    if (!p.shapeKeys.contains(key))
                        p.shapeKeys << key; // problem.yaml's order, for every text that names a shape
                }
                p.shapes << map;
            }
        }
    } else if (!kernelBench) {
        r.error(n, QStringLiteral("missing required key 'shapes'"));
    }
}

void readShapeRanges(YamlReader &r, const YAML::Node &n, Problem &p)
{
    if (const auto ranges = n["shape_ranges"]) {
        if (!ranges.IsMap()) {
            r.error(ranges, QStringLiteral("'shape_ranges' must be a mapping such as {M: [1, 600]}"));
        } else {
            for (const auto &kv : ranges) {
                const QString key = fromStd(kv.first.as<std::string>(""));
                const auto bounds = kv.second;
                if (!bounds.IsSequence() || bounds.size() != 2) {
                    r.error(bounds, QStringLiteral("shape_ranges.%1 must be [low, high]").arg(key));
                    continue;
                }
                const auto lo = r.integer(bounds[0], QStringLiteral("shape_ranges.") + key);
                const auto hi = r.integer(bounds[1], QStringLiteral("shape_ranges.") + key);
                if (lo && hi && (*lo < 0 || *hi < *lo))
                    r.error(bounds, QStringLiteral("shape_ranges.%1: need 0 <= low <= high").arg(key));
                else if (lo && hi)
                    p.shapeRanges.append({key, {*lo, *hi}});
            }
        }
    }
}

} // namespace

std::optional<Target> Repository::loadTarget(const QString &dir, QString *error)
{
    const QString path = dir + QStringLiteral("/backend.yaml");
    const auto text = readFile(path, error);
    if (!text)
        return std::nullopt;
    YamlReader r(path);
    const auto root = r.parse(*text);
    Target t;
    t.dir = QFileInfo(dir).absoluteFilePath();
    t.name = QFileInfo(dir).fileName();
    if (root) {
        r.checkKeys(*root, {}, backendKeys());
        const YAML::Node &n = *root;
        if (n.IsMap()) {
            readTargetBasics(r, n, t);
            readTargetChecks(r, n, t);
            readTargetSettings(r, n, t);
            readTargetEnvironment(r, n, t);
            const YAML::Node steps = n["steps"];
            if (!steps || !steps.IsSequence() || steps.size() == 0)
                r.error(n, QStringLiteral("'steps' must be a non-empty list"));
            else
                t.steps = parseSteps(r, steps, QStringLiteral("steps"), false);
            if (const YAML::Node setup = n["setup"]) {
                if (!setup.IsSequence())
                    r.error(setup, QStringLiteral("'setup' must be a list of steps"));
                else
                    t.setupSteps = parseSteps(r, setup, QStringLiteral("setup"), true);
            }
        }
    }
    if (fail(r, error))
        return std::nullopt;
    return t;
}

std::optional<Problem> Repository::loadProblem(const QString &dir, const QString &target, QString *error)
{
    const QString path = dir + QStringLiteral("/problem.yaml");
    const auto text = readFile(path, error);
    if (!text)
        return std::nullopt;
    YamlReader r(path);
    const auto root = r.parse(*text);
    Problem p;
    p.dir = QFileInfo(dir).absoluteFilePath();
    p.name = QFileInfo(dir).fileName();
    p.target = target;
    if (root) {
        const YAML::Node &n = *root;
        r.checkKeys(n, {}, problemKeys());
        if (n.IsMap()) {
            auto fileKey = [&](const char *key, QString &out, bool required) {
                if (const auto v = n[key]) {
                    const QString rel = r.string(v, QLatin1String(key)).value_or(QString());
                    out = QDir(p.dir).absoluteFilePath(rel);
                    if (!QFileInfo::exists(out))
                        r.error(v, QStringLiteral("'%1' names %2, which does not exist").arg(QLatin1String(key), out));
                } else if (required) {
                    r.error(n, QStringLiteral("missing required key '%1'").arg(QLatin1String(key)));
                }
            };
            if (n["name"])
                p.name = r.string(n["name"], QStringLiteral("name")).value_or(p.name);
            if (n["description"])
                p.description = r.string(n["description"], QStringLiteral("description")).value_or(QString());
            if (n["entry"])
                p.entry = r.string(n["entry"], QStringLiteral("entry")).value_or(QString());
            if (n["signature"])
                p.signature = r.string(n["signature"], QStringLiteral("signature")).value_or(QString());
            if (n["dtype"])
                p.dtype = r.string(n["dtype"], QStringLiteral("dtype")).value_or(p.dtype);
            if (n["format"]) {
                p.format = r.string(n["format"], QStringLiteral("format")).value_or(QString());
                if (p.format != QLatin1String("kernelbench") && p.format != QLatin1String("gpumode"))
                    r.error(
                        n["format"],
                        QStringLiteral("'format' must be kernelbench or gpumode (or absent), not '%1'").arg(p.format));
            }
            // Problems in another project's format carry their own sizes: no shapes here.
            const bool kernelBench = !p.format.isEmpty();
            if (n["level"]) {
                p.level = int(r.integer(n["level"], QStringLiteral("level")).value_or(0));
                if (p.level < 0 || p.level > 9)
                    r.error(n["level"], QStringLiteral("'level' must be 0..9"));
            }
            if (n["scale"]) {
                p.scale = r.number(n["scale"], QStringLiteral("scale")).value_or(1.0);
                if (!(p.scale > 0 && p.scale <= 1))
                    r.error(n["scale"],
                            QStringLiteral("'scale' must be in (0, 1]: the factor applied to the file's sizes"));
            }
            fileKey("start", p.startFile, true);
            fileKey("reference", p.referenceFile, true);
            fileKey("context", p.contextFile, false);
            if (!p.contextFile.isEmpty())
                p.context = readText(p.contextFile);
            readProblemShapes(r, n, p, kernelBench);
            if (n["bench_shape"])
                p.benchShape = int(r.integer(n["bench_shape"], QStringLiteral("bench_shape")).value_or(0));
            if (p.benchShape < 0 || (!p.shapes.isEmpty() && p.benchShape >= p.shapes.size()))
                r.error(n["bench_shape"],
                        QStringLiteral("'bench_shape' must index into 'shapes' (0..%1)").arg(p.shapes.size() - 1));
            if (const auto tol = n["tolerance"]) {
                r.checkKeys(tol, QStringLiteral("tolerance"), {QStringLiteral("rtol"), QStringLiteral("atol")});
                p.toleranceSet = true;
                if (tol.IsMap()) {
                    if (tol["rtol"])
                        p.rtol = r.number(tol["rtol"], QStringLiteral("tolerance.rtol")).value_or(p.rtol);
                    if (tol["atol"])
                        p.atol = r.number(tol["atol"], QStringLiteral("tolerance.atol")).value_or(p.atol);
                }
            }
            if (n["flops"])
                p.flops = r.string(n["flops"], QStringLiteral("flops")).value_or(QString());
            if (n["bytes"])
                p.bytes = r.string(n["bytes"], QStringLiteral("bytes")).value_or(QString());
            if (n["allow_libraries"])
                p.allowLibraries = r.boolean(n["allow_libraries"], QStringLiteral("allow_libraries")).value_or(false);
            readShapeRanges(r, n, p);
            if (n["random_shapes"]) {
                p.randomShapes = int(r.integer(n["random_shapes"], QStringLiteral("random_shapes")).value_or(2));
                if (p.randomShapes < 0 || p.randomShapes > 16)
                    r.error(n["random_shapes"], QStringLiteral("'random_shapes' must be 0..16"));
            }
            if (n["allow_threads"])
                p.allowThreads = r.boolean(n["allow_threads"], QStringLiteral("allow_threads")).value_or(false);
            if (const auto libraries = n["libraries"]) {
                // Names for the linker's -l: openblas, m, ... nothing that could pass another option.
                static const QRegularExpression s_name(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9_+.-]*$"));
                p.libraries = r.stringList(libraries, QStringLiteral("libraries")).value_or(QStringList());
                for (const QString &library : std::as_const(p.libraries))
                    if (!s_name.match(library).hasMatch())
                        r.error(
                            libraries,
                            QStringLiteral("'libraries' entry '%1' is not a library name (as in -lopenblas: openblas)")
                                .arg(library));
                if (!p.libraries.isEmpty() && !p.allowLibraries)
                    r.error(libraries, QStringLiteral("'libraries' needs 'allow_libraries: true'"));
            }
        }
    }
    if (p.entry.isEmpty())
        p.entry = p.name;
    if (fail(r, error))
        return std::nullopt;
    return p;
}

QStringList Repository::agentConfigKeys()
{
    return {QStringLiteral("name"), QStringLiteral("version"), QStringLiteral("target"), QStringLiteral("description"),
            QStringLiteral("sources"), QStringLiteral("agent_name"), QStringLiteral("built_at"),
            QStringLiteral("build"),
            // written by our agent builder (core/agents/agent_builder.cpp)
            QStringLiteral("models"), QStringLiteral("scope"), QStringLiteral("budget_chars"),
            QStringLiteral("extracted_strategies")};
}

std::optional<Agent> Repository::loadAgent(const QString &dir, QString *error)
{
    Agent a;
    a.dir = QFileInfo(dir).absoluteFilePath();
    a.name = QFileInfo(dir).fileName();
    const QString configPath = dir + QStringLiteral("/agent_config.yaml");
    const auto configText = readFile(configPath, error);
    if (!configText)
        return std::nullopt;
    YamlReader r(configPath);
    if (const auto root = r.parse(*configText); root && root->IsMap()) {
        const YAML::Node &n = *root;
        r.checkKeys(n, {}, agentConfigKeys());
        // Autocomp's agent builder writes agent_name (and built_at and build: how it was made, kept as they are).
        if (n["agent_name"])
            a.name = r.string(n["agent_name"], QStringLiteral("agent_name")).value_or(a.name);
        if (n["name"])
            a.name = r.string(n["name"], QStringLiteral("name")).value_or(a.name);
        if (n["version"])
            a.version = r.string(n["version"], QStringLiteral("version")).value_or(QString());
        if (n["target"])
            a.target = r.string(n["target"], QStringLiteral("target")).value_or(QString());
        if (n["description"])
            a.description = r.string(n["description"], QStringLiteral("description")).value_or(QString());
    } else if (root) {
        r.error(*root, QStringLiteral("agent_config.yaml must be a mapping"));
    }
    if (fail(r, error))
        return std::nullopt;

    a.architecture = readText(dir + QStringLiteral("/architecture.md"));
    a.isaDocs = readText(dir + QStringLiteral("/isa_docs.md"));

    auto readMenu = [&](const QString &file, QStringList &out, bool required) -> bool {
        const QString path = dir + QLatin1Char('/') + file;
        if (!QFileInfo::exists(path)) {
            if (required && error)
                *error = QStringLiteral("%1: missing (an agent needs an optimization menu)").arg(path);
            return !required;
        }
        YamlReader mr(path);
        const auto text = readFile(path, error);
        if (!text)
            return false;
        if (const auto root = mr.parse(*text)) {
            // Ours write `optimizations:`; Autocomp's agent builder writes `strategies:` in translation menus.
            // Either key, in either file; both at once is ambiguous.
            const bool isMap = root->IsMap();
            const YAML::Node ours = isMap ? (*root)["optimizations"] : YAML::Node();
            const YAML::Node theirs = isMap ? (*root)["strategies"] : YAML::Node();
            const QString key = ours ? QStringLiteral("optimizations") : QStringLiteral("strategies");
            const YAML::Node items = ours ? ours : theirs;
            if (isMap)
                mr.checkKeys(*root, {}, {QStringLiteral("optimizations"), QStringLiteral("strategies")});
            if (ours && theirs) {
                mr.error(theirs,
                         QStringLiteral("both 'optimizations' and 'strategies': give the menu under one of them"));
            } else if (!items || !items.IsSequence()) {
                mr.error(items ? items : *root,
                         QStringLiteral(
                             "expected 'optimizations: [{strategy: \"...\"}]' (or Autocomp's 'strategies: [...]')"));
            } else {
                for (const auto &item : items) {
                    if (item.IsMap() && item["strategy"])
                        out << mr.string(item["strategy"], key + QStringLiteral("[].strategy")).value_or(QString());
                    else if (item.IsScalar())
                        out << fromStd(item.Scalar());
                    else
                        mr.error(item, QStringLiteral("each entry of '%1' must be {strategy: \"...\"}").arg(key));
                }
            }
        }
        return !fail(mr, error);
    };
    if (!readMenu(QStringLiteral("optimization_menu.yaml"), a.menu, true))
        return std::nullopt;
    if (!readMenu(QStringLiteral("translation_menu.yaml"), a.translationMenu, false))
        return std::nullopt;

    const QString rulesPath = dir + QStringLiteral("/rules.yaml");
    if (QFileInfo::exists(rulesPath)) {
        YamlReader rr(rulesPath);
        const auto text = readFile(rulesPath, error);
        if (!text)
            return std::nullopt;
        if (const auto root = rr.parse(*text)) {
            rr.checkKeys(*root, {}, {QStringLiteral("general"), QStringLiteral("planning"), QStringLiteral("coding")});
            if (root->IsMap()) {
                if ((*root)["general"])
                    a.rulesGeneral =
                        rr.stringList((*root)["general"], QStringLiteral("general")).value_or(QStringList());
                if ((*root)["planning"])
                    a.rulesPlanning =
                        rr.stringList((*root)["planning"], QStringLiteral("planning")).value_or(QStringList());
                if ((*root)["coding"])
                    a.rulesCoding = rr.stringList((*root)["coding"], QStringLiteral("coding")).value_or(QStringList());
            }
        }
        if (fail(rr, error))
            return std::nullopt;
    }

    // code_examples.md: "## name", an optional "SUMMARY: ..." line, then a fenced code block.
    const QString examples = readText(dir + QStringLiteral("/code_examples.md"));
    CodeExample current;
    bool inFence = false;
    const auto flush = [&] {
        if (!current.name.isEmpty())
            a.codeExamples << current;
        current = {};
    };
    for (const QString &line : examples.split(QLatin1Char('\n'))) {
        if (!inFence && line.startsWith(QLatin1String("## "))) {
            flush();
            current.name = line.mid(3).trimmed();
        } else if (line.trimmed().startsWith(QLatin1String("```"))) {
            inFence = !inFence;
        } else if (inFence) {
            current.code += line + QLatin1Char('\n');
        } else if (line.startsWith(QLatin1String("SUMMARY:"))) {
            current.summary = line.mid(8).trimmed();
        }
    }
    flush();
    return a;
}

} // namespace autocomp
