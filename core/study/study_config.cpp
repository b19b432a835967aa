#include "study/study_config.h"

#include "platform/yaml_reader.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>

// GCC 12 at -O3 reports the inlined QList<double>{...} default of SearchConfig::parentSlack as maybe
// uninitialized when a StudyRun is built here (a false positive: the list is a constant initializer).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace autocomp {

QString StudyPoint::name() const
{
    QStringList parts;
    for (const auto &[key, value] : values)
        parts << key + QLatin1Char('=') + value;
    return parts.join(QLatin1Char(','));
}

QString StudyLabel::format(const QString &study, const QString &problem, const StudyPoint &point, quint64 seed)
{
    QStringList parts{QStringLiteral("study:") + study, QStringLiteral("problem=") + problem};
    for (const auto &[key, value] : point.values)
        parts << key + QLatin1Char('=') + value;
    parts << QStringLiteral("seed=%1").arg(seed);
    return parts.join(QLatin1Char(' '));
}

std::optional<StudyLabel> StudyLabel::parse(const QString &label)
{
    if (!label.startsWith(QLatin1String("study:")))
        return std::nullopt;
    const QStringList parts = label.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (parts.size() < 3)
        return std::nullopt;
    StudyLabel l;
    l.study = parts.first().mid(6);
    for (qsizetype i = 1; i < parts.size(); ++i) {
        const qsizetype eq = parts.at(i).indexOf(QLatin1Char('='));
        if (eq <= 0)
            return std::nullopt;
        const QString key = parts.at(i).left(eq);
        const QString value = parts.at(i).mid(eq + 1);
        if (i == 1) {
            if (key != QLatin1String("problem"))
                return std::nullopt;
            l.problem = value;
        } else if (i == parts.size() - 1) {
            bool ok = false;
            l.seed = value.toULongLong(&ok);
            if (key != QLatin1String("seed") || !ok)
                return std::nullopt;
        } else {
            l.values << std::make_pair(key, value);
        }
    }
    if (l.study.isEmpty() || l.problem.isEmpty())
        return std::nullopt;
    return l;
}

QList<StudyPoint> StudyConfig::points() const
{
    QList<StudyPoint> out{StudyPoint{}};
    for (const StudySetting &setting : vary) {
        QList<StudyPoint> next;
        for (const StudyPoint &p : std::as_const(out))
            for (const QString &value : setting.values) {
                StudyPoint q = p;
                q.values << std::make_pair(setting.key, value);
                next << q;
            }
        out = next;
    }
    return out;
}

namespace {

const QRegularExpression &namePattern()
{
    static const QRegularExpression s(QStringLiteral("^[A-Za-z0-9._-]+$"));
    return s;
}

// A key of vary: as a path in the run configuration: a bare key is under search:.
QStringList keyPath(const QString &key)
{
    return key.contains(QLatin1Char('.')) ? key.split(QLatin1Char('.')) : QStringList{QStringLiteral("search"), key};
}

// Sets path in a copy of root to the scalar `value` (as written: YAML types it again when the run reads it).
void setPath(const YAML::Node &root, const QStringList &path, const std::string &value)
{
    // yaml-cpp's Node assignment writes through to the node referred to: reset() moves the reference.
    YAML::Node node;
    node.reset(root);
    for (qsizetype i = 0; i + 1 < path.size(); ++i) {
        const std::string part = toStd(path.at(i));
        if (!node[part] || !node[part].IsMap())
            node[part] = YAML::Node(YAML::NodeType::Map);
        YAML::Node child = node[part];
        node.reset(child);
    }
    node[toStd(path.last())] = YAML::Load(value);
}

QByteArray emit(const YAML::Node &root)
{
    YAML::Emitter out;
    out << root;
    return QByteArray(out.c_str()) + '\n';
}

// "run:3: 'search.beam_width' must be at least 1" -> "'search.beam_width' must be at least 1".
QString withoutPlace(const QString &error)
{
    static const QRegularExpression s_place(QStringLiteral("^[^:]*(:\\d+)?(:\\d+)?: "));
    QString e = error;
    return e.remove(s_place);
}

// The parts of a study file, each read into `study` with its errors reported on `r`.
void readStudyName(YamlReader &r, const YAML::Node &root, const QString &filePath, StudyConfig &study)
{
    study.name = QFileInfo(filePath).completeBaseName();
    if (const auto n = root["name"]) {
        if (const auto name = r.string(n, QStringLiteral("name"))) {
            if (namePattern().match(*name).hasMatch())
                study.name = *name;
            else
                r.error(n,
                        QStringLiteral("'name' may hold only letters, digits, '.', '_' and '-', got '%1'").arg(*name));
        }
    } else if (!namePattern().match(study.name).hasMatch()) {
        r.error(root,
                QStringLiteral(
                    "the file's name '%1' is no study name (letters, digits, '.', '_', '-'): give one with 'name:'")
                    .arg(study.name));
    }
}

void readStudyBase(YamlReader &r, const YAML::Node &root, const QString &filePath, StudyConfig &study)
{
    if (const auto n = root["base"]) {
        if (const auto base = r.string(n, QStringLiteral("base"))) {
            study.basePath = QFileInfo(QFileInfo(filePath).absoluteDir(), *base).absoluteFilePath();
            QFile file(study.basePath);
            if (!file.open(QIODevice::ReadOnly))
                r.error(n, QStringLiteral("'base': cannot read %1: %2").arg(study.basePath, file.errorString()));
            else
                study.baseYaml = file.readAll();
        }
    } else {
        r.error(root, QStringLiteral("missing required key 'base' (a run configuration, e.g. base: run.yaml)"));
    }
}

void readStudyProblems(YamlReader &r, const YAML::Node &root, StudyConfig &study)
{
    if (const auto n = root["problems"]) {
        if (!n.IsSequence() || n.size() == 0) {
            r.error(
                n,
                QStringLiteral("'problems' must be a non-empty list of target/problem (e.g. [cpu/gemm, rvv/saxpy])"));
        } else {
            for (const auto &item : n) {
                const auto text = r.string(item, QStringLiteral("problems"));
                if (!text)
                    continue;
                const QStringList parts = text->split(QLatin1Char('/'));
                if (parts.size() != 2 || parts.at(0).isEmpty() || parts.at(1).isEmpty()) {
                    r.error(item, QStringLiteral("'problems': '%1' is not target/problem (e.g. cpu/gemm)").arg(*text));
                    continue;
                }
                const auto entry = std::make_pair(parts.at(0), parts.at(1));
                if (study.problems.contains(entry))
                    r.error(item, QStringLiteral("'problems': %1 is listed twice").arg(*text));
                else
                    study.problems << entry;
            }
        }
    } else {
        r.error(root, QStringLiteral("missing required key 'problems' (e.g. problems: [cpu/gemm])"));
    }
}

// One entry of 'vary': a setting and its values; nullopt (reported) when it cannot be varied.
std::optional<StudySetting> readVarySetting(YamlReader &r, const std::pair<YAML::Node, YAML::Node> &entry)
{
    StudySetting setting;
    setting.key = fromStd(entry.first.as<std::string>(""));
    const QString field = QStringLiteral("vary.") + setting.key;
    if (setting.key.isEmpty() || keyPath(setting.key).contains(QString())) {
        r.error(entry.first, QStringLiteral("'vary': '%1' is not a setting").arg(setting.key));
        return std::nullopt;
    }
    if (keyPath(setting.key) == QStringList{QStringLiteral("search"), QStringLiteral("seed")}) {
        r.error(entry.first, QStringLiteral("'%1': seeds are set with 'seeds:', not varied").arg(field));
        return std::nullopt;
    }
    if (setting.key == QLatin1String("target") || setting.key == QLatin1String("problem")) {
        r.error(entry.first, QStringLiteral("'%1': problems are set with 'problems:', not varied").arg(field));
        return std::nullopt;
    }
    const YAML::Node values = entry.second;
    if (!values.IsSequence() || values.size() == 0) {
        r.error(values, QStringLiteral("'%1' must be a non-empty list of values").arg(field));
        return std::nullopt;
    }
    for (const auto &value : values) {
        if (!value.IsScalar()) {
            r.error(value,
                    QStringLiteral("'%1': each value must be a single value (a number, a word), not a collection")
                        .arg(field));
            continue;
        }
        const QString text = fromStd(value.Scalar());
        if (text.isEmpty() || text.contains(QRegularExpression(QStringLiteral("[\\s=,]")))) {
            r.error(value,
                    QStringLiteral("'%1': value '%2' may not be empty or hold spaces, '=' or ','").arg(field, text));
            continue;
        }
        if (setting.values.contains(text)) {
            r.error(value, QStringLiteral("'%1': value '%2' is listed twice").arg(field, text));
            continue;
        }
        setting.values << text;
        setting.lines << value.Mark().line + 1;
    }
    return setting;
}

void readStudyVary(YamlReader &r, const YAML::Node &root, StudyConfig &study)
{
    if (const auto n = root["vary"]) {
        if (!n.IsMap() || n.size() == 0 || n.size() > 2) {
            r.error(n,
                    QStringLiteral(
                        "'vary' must map one or two settings to their values (e.g. vary: {beam_width: [1, 2, 4]})"));
        } else {
            for (const auto &entry : n)
                if (auto setting = readVarySetting(r, entry))
                    study.vary << *setting;
            if (study.vary.size() == 2 && keyPath(study.vary.at(0).key) == keyPath(study.vary.at(1).key))
                r.error(n,
                        QStringLiteral("'vary': %1 and %2 are the same setting")
                            .arg(study.vary.at(0).key, study.vary.at(1).key));
        }
    } else {
        r.error(root, QStringLiteral("missing required key 'vary' (e.g. vary: {beam_width: [1, 2, 4, 8]})"));
    }
}

// 'seeds': a count (*seedCount) or a list (*seedList); one seed when the file says nothing.
void readStudySeeds(YamlReader &r, const YAML::Node &root, std::optional<qint64> *seedCount, QList<quint64> *seedList)
{
    if (const auto n = root["seeds"]) {
        if (n.IsSequence()) {
            for (const auto &item : n)
                if (const auto seed = r.integer(item, QStringLiteral("seeds")); seed && *seed >= 0) {
                    if (seedList->contains(quint64(*seed)))
                        r.error(item, QStringLiteral("'seeds': %1 is listed twice").arg(*seed));
                    *seedList << quint64(*seed);
                } else if (seed) {
                    r.error(item, QStringLiteral("'seeds': a seed must not be negative, got %1").arg(*seed));
                }
            if (n.size() == 0)
                r.error(n,
                        QStringLiteral("'seeds' must be a number of seeds (1 or more) or a non-empty list of seeds"));
        } else if (const auto count = r.integer(n, QStringLiteral("seeds"))) {
            if (*count < 1 || *count > 1000)
                r.error(n, QStringLiteral("'seeds' must be between 1 and 1000, got %1").arg(*count));
            else
                *seedCount = *count;
        }
    } else {
        *seedCount = 1;
    }
}

// The base as a run configuration by itself, errors at its own lines. Its target and problem, when it
// has none, are those of the first problem (appended, so the file's lines stay as they are).
bool readStudyBaseConfig(YamlReader &r, const YAML::Node &root, StudyConfig &study, QStringList *errors)
{
    QByteArray text = study.baseYaml;
    QStringList baseErrors;
    const auto baseRoot = YamlReader(study.basePath).parse(text);
    if (baseRoot && baseRoot->IsMap()) {
        if (!(*baseRoot)["target"])
            text += "\ntarget: " + study.problems.first().first.toUtf8();
        if (!(*baseRoot)["problem"])
            text += "\nproblem: " + study.problems.first().second.toUtf8() + '\n';
    }
    const auto base = RunConfig::fromYaml(text, study.basePath, &baseErrors);
    if (!base) {
        if (errors)
            *errors << QStringLiteral("%1: 'base' %2 is not a valid run configuration:")
                           .arg(r.where(root["base"]), study.basePath)
                    << baseErrors;
        return false;
    }
    study.base = *base;
    return true;
}

// Every run's configuration. A value the run configuration refuses is the study's error, at the value.
// False when a run's configuration was refused (each refusal reported once in *errors).
bool expandStudyRuns(const QString &filePath, StudyConfig &study, QStringList *errors)
{
    const YAML::Node baseRoot = YAML::Load(study.baseYaml.toStdString());
    QSet<QString> reported;
    for (const auto &[target, problem] : std::as_const(study.problems)) {
        for (const StudyPoint &point : study.points()) {
            for (quint64 seed : std::as_const(study.seeds)) {
                YAML::Node node = YAML::Clone(baseRoot.IsMap() ? baseRoot : YAML::Node(YAML::NodeType::Map));
                node["target"] = toStd(target);
                node["problem"] = toStd(problem);
                setPath(node, {QStringLiteral("search"), QStringLiteral("seed")}, std::to_string(seed));
                for (const auto &[key, value] : point.values)
                    setPath(node, keyPath(key), toStd(value));
                StudyRun run;
                run.target = target;
                run.problem = problem;
                run.point = point;
                run.seed = seed;
                run.configYaml = emit(node);
                run.label = StudyLabel::format(study.name, run.problemName(), point, seed);
                QStringList runErrors;
                const auto config = RunConfig::fromYaml(run.configYaml, QStringLiteral("run"), &runErrors);
                if (!config) {
                    // Attributed to the values of the point (the base alone was valid).
                    for (const QString &e : std::as_const(runErrors)) {
                        QString where = filePath;
                        QString field = QStringLiteral("vary");
                        for (qsizetype k = 0; k < study.vary.size(); ++k) {
                            const StudySetting &s = study.vary.at(k);
                            const QString path = keyPath(s.key).join(QLatin1Char('.'));
                            const QString value = point.values.at(k).second;
                            if (e.contains(path)
                                || e.contains(QLatin1Char('\'') + keyPath(s.key).last() + QLatin1Char('\''))
                                || study.vary.size() == 1) {
                                where = QStringLiteral("%1:%2").arg(filePath).arg(
                                    s.lines.value(s.values.indexOf(value)));
                                field = QStringLiteral("vary.%1 = %2").arg(s.key, value);
                                break;
                            }
                        }
                        const QString message = QStringLiteral("%1: '%2' is refused by the run configuration: %3")
                                                    .arg(where, field, withoutPlace(e));
                        if (!reported.contains(message)) {
                            reported.insert(message);
                            if (errors)
                                *errors << message;
                        }
                    }
                    continue;
                }
                run.config = *config;
                study.runs << run;
            }
        }
    }
    return reported.isEmpty();
}

} // namespace

std::optional<StudyConfig> StudyConfig::fromFile(const QString &path, QStringList *errors)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (errors)
            *errors << QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    return fromYaml(file.readAll(), path, errors);
}

std::optional<StudyConfig> StudyConfig::fromYaml(const QByteArray &yaml, const QString &filePath, QStringList *errors)
{
    YamlReader r(filePath);
    StudyConfig study;
    study.filePath = filePath;
    const auto parsed = r.parse(yaml);
    const auto fail = [&]() -> std::optional<StudyConfig> {
        if (errors)
            *errors << r.errors();
        return std::nullopt;
    };
    if (!parsed)
        return fail();
    const YAML::Node &root = *parsed;
    if (!root.IsMap()) {
        r.error(root, QStringLiteral("a study must be a mapping with 'base', 'problems' and 'vary'"));
        return fail();
    }
    r.checkKeys(root, {},
                {QStringLiteral("name"), QStringLiteral("base"), QStringLiteral("problems"), QStringLiteral("vary"),
                 QStringLiteral("seeds"), QStringLiteral("parallel")});

    readStudyName(r, root, filePath, study);
    readStudyBase(r, root, filePath, study);
    readStudyProblems(r, root, study);
    readStudyVary(r, root, study);
    std::optional<qint64> seedCount;
    QList<quint64> seedList;
    readStudySeeds(r, root, &seedCount, &seedList);
    if (const auto n = root["parallel"]) {
        if (const auto p = r.integer(n, QStringLiteral("parallel"))) {
            if (*p < 1 || *p > 64)
                r.error(n, QStringLiteral("'parallel' must be between 1 and 64, got %1").arg(*p));
            else
                study.parallel = int(*p);
        }
    }
    if (!r.ok())
        return fail();

    if (!readStudyBaseConfig(r, root, study, errors))
        return std::nullopt;
    study.seeds = seedList;
    if (seedCount)
        for (qint64 i = 0; i < *seedCount; ++i)
            study.seeds << study.base.search.seed + quint64(i);

    if (!expandStudyRuns(filePath, study, errors))
        return std::nullopt;
    return study;
}

} // namespace autocomp
