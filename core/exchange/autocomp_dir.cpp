#include "exchange/autocomp_dir.h"
#include "model/code_identity.h"
#include "model/metric_units.h"
#include "store/run_store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QSet>
#include <QSaveFile>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>
#include <limits>
#include <memory>
#include <vector>

namespace autocomp {

namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------------
// Python literals (candidate_K.txt is a Python repr() that Autocomp reads back with eval()).

QString pyEscaped(const QString &text, bool escapeNewlines)
{
    QString out;
    out.reserve(text.size() + 16);
    for (QChar ch : text) {
        if (ch == QLatin1Char('\\'))
            out += QLatin1String("\\\\");
        else if (ch == QLatin1Char('\''))
            out += QLatin1String("\\'");
        else if (escapeNewlines && ch == QLatin1Char('\n'))
            out += QLatin1String("\\n");
        else if (escapeNewlines && ch == QLatin1Char('\r'))
            out += QLatin1String("\\r");
        else if (escapeNewlines && ch == QLatin1Char('\t'))
            out += QLatin1String("\\t");
        else
            out += ch;
    }
    return out;
}

QString pyString(const QString &text) { return QLatin1Char('\'') + pyEscaped(text, true) + QLatin1Char('\''); }
// Autocomp writes '''...''' with only quotes escaped; we escape backslashes too so eval() gives the text back exactly.
QString pyTriple(const QString &text) { return QStringLiteral("'''") + pyEscaped(text, false) + QStringLiteral("'''"); }

QString pyFloat(double v)
{
    if (std::isnan(v))
        return QStringLiteral("None");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("float('inf')") : QStringLiteral("float('-inf')");
    QString s = QString::number(v, 'g', 17);
    if (!s.contains(QLatin1Char('.')) && !s.contains(QLatin1Char('e')))
        s += QStringLiteral(".0");
    return s;
}

struct PyVal
{
    enum Kind { None, Bool, Num, Str, List, Dict, Call } kind = None;
    double num = 0;
    bool boolean = false;
    QString str; // Str: the text; Call: the callee
    std::vector<PyVal> items; // List items; Dict values; Call keyword values
    QStringList keys; // Dict keys (as text); Call keyword names

    const PyVal *arg(const QString &name) const
    {
        const qsizetype i = keys.indexOf(name);
        return i >= 0 && size_t(i) < items.size() ? &items[size_t(i)] : nullptr;
    }
};

// A small recursive-descent reader for the subset of Python literals repr() of a CodeCandidate produces.
class PyReader
{
public:
    explicit PyReader(QString text) : m_s(std::move(text)) {}

    bool read(PyVal *out, QString *error)
    {
        if (!value(out, 0)) {
            *error = m_error;
            return false;
        }
        skipSpace();
        if (m_pos != m_s.size()) {
            *error = where(QStringLiteral("unexpected text after the value"));
            return false;
        }
        return true;
    }

private:
    QString where(const QString &what) const
    {
        const qsizetype line = m_s.left(m_pos).count(QLatin1Char('\n')) + 1;
        return QStringLiteral("line %1: %2").arg(line).arg(what);
    }
    bool fail(const QString &what)
    {
        if (m_error.isEmpty())
            m_error = where(what);
        return false;
    }
    void skipSpace()
    {
        while (m_pos < m_s.size()) {
            const QChar c = m_s.at(m_pos);
            if (c.isSpace())
                ++m_pos;
            else if (c == QLatin1Char('#')) {
                while (m_pos < m_s.size() && m_s.at(m_pos) != QLatin1Char('\n'))
                    ++m_pos;
            } else
                break;
        }
    }
    bool peek(QChar c)
    {
        skipSpace();
        return m_pos < m_s.size() && m_s.at(m_pos) == c;
    }
    bool expect(QChar c)
    {
        if (!peek(c))
            return fail(QStringLiteral("expected '%1'").arg(c));
        ++m_pos;
        return true;
    }
    QString identifier()
    {
        skipSpace();
        const qsizetype start = m_pos;
        while (m_pos < m_s.size()
               && (m_s.at(m_pos).isLetterOrNumber() || m_s.at(m_pos) == QLatin1Char('_')
                   || m_s.at(m_pos) == QLatin1Char('.')))
            ++m_pos;
        return m_s.mid(start, m_pos - start);
    }

    bool string(PyVal *out)
    {
        bool raw = false;
        while (m_pos < m_s.size() && QStringLiteral("rRuUbB").contains(m_s.at(m_pos))) {
            raw = raw || m_s.at(m_pos).toLower() == QLatin1Char('r');
            ++m_pos;
        }
        const QChar q = m_s.at(m_pos);
        const bool triple = m_s.mid(m_pos, 3) == QString(3, q);
        m_pos += triple ? 3 : 1;
        QString text;
        for (;;) {
            if (m_pos >= m_s.size())
                return fail(QStringLiteral("unterminated string"));
            const QChar c = m_s.at(m_pos);
            if (c == q && (!triple || m_s.mid(m_pos, 3) == QString(3, q))) {
                m_pos += triple ? 3 : 1;
                break;
            }
            if (!triple && c == QLatin1Char('\n'))
                return fail(QStringLiteral("unterminated string"));
            if (c != QLatin1Char('\\') || m_pos + 1 >= m_s.size()) {
                text += c;
                ++m_pos;
                continue;
            }
            const QChar e = m_s.at(m_pos + 1);
            if (raw) {
                text += c;
                text += e;
                m_pos += 2;
                continue;
            }
            m_pos += 2;
            switch (e.unicode()) {
            case '\n': break; // line continuation
            case '\\': text += QLatin1Char('\\'); break;
            case '\'': text += QLatin1Char('\''); break;
            case '"': text += QLatin1Char('"'); break;
            case 'n': text += QLatin1Char('\n'); break;
            case 't': text += QLatin1Char('\t'); break;
            case 'r': text += QLatin1Char('\r'); break;
            case 'a': text += QChar(7); break;
            case 'b': text += QChar(8); break;
            case 'f': text += QChar(12); break;
            case 'v': text += QChar(11); break;
            case 'x':
            case 'u':
            case 'U': {
                const int digits = e == QLatin1Char('x') ? 2 : e == QLatin1Char('u') ? 4 : 8;
                bool ok = false;
                const uint code = m_s.mid(m_pos, digits).toUInt(&ok, 16);
                if (!ok)
                    return fail(QStringLiteral("bad \\%1 escape").arg(e));
                m_pos += digits;
                text += QString::fromUcs4(reinterpret_cast<const char32_t *>(&code), 1);
                break;
            }
            default:
                if (e >= QLatin1Char('0') && e <= QLatin1Char('7')) {
                    qsizetype n = m_pos - 1;
                    int value = 0;
                    int count = 0;
                    while (count < 3 && n < m_s.size() && m_s.at(n) >= QLatin1Char('0')
                           && m_s.at(n) <= QLatin1Char('7')) {
                        value = value * 8 + (m_s.at(n).unicode() - '0');
                        ++n;
                        ++count;
                    }
                    m_pos = n;
                    text += QChar(value);
                } else {
                    text += QLatin1Char('\\'); // Python keeps unknown escapes as they are
                    text += e;
                }
            }
        }
        out->kind = PyVal::Str;
        out->str = text;
        // Adjacent literals concatenate.
        skipSpace();
        if (m_pos < m_s.size() && (m_s.at(m_pos) == QLatin1Char('\'') || m_s.at(m_pos) == QLatin1Char('"'))) {
            PyVal next;
            if (!string(&next))
                return false;
            out->str += next.str;
        }
        return true;
    }

    bool sequence(PyVal *out, QChar close, int depth)
    {
        out->kind = PyVal::List;
        while (!peek(close)) {
            PyVal item;
            if (!value(&item, depth + 1))
                return false;
            out->items.push_back(std::move(item));
            if (peek(QLatin1Char(',')))
                ++m_pos;
            else if (!peek(close))
                return fail(QStringLiteral("expected ',' or '%1'").arg(close));
        }
        ++m_pos;
        return true;
    }

    bool value(PyVal *out, int depth)
    {
        if (depth > 2000)
            return fail(QStringLiteral("nested too deeply"));
        skipSpace();
        if (m_pos >= m_s.size())
            return fail(QStringLiteral("unexpected end of file"));
        const QChar c = m_s.at(m_pos);
        if (c == QLatin1Char('\'') || c == QLatin1Char('"'))
            return string(out);
        if ((c == QLatin1Char('r') || c == QLatin1Char('R') || c == QLatin1Char('b') || c == QLatin1Char('u'))
            && m_pos + 1 < m_s.size()
            && (m_s.at(m_pos + 1) == QLatin1Char('\'') || m_s.at(m_pos + 1) == QLatin1Char('"')))
            return string(out);
        if (c == QLatin1Char('[')) {
            ++m_pos;
            return sequence(out, QLatin1Char(']'), depth);
        }
        if (c == QLatin1Char('(')) {
            ++m_pos;
            return sequence(out, QLatin1Char(')'), depth);
        }
        if (c == QLatin1Char('{')) {
            ++m_pos;
            out->kind = PyVal::Dict;
            while (!peek(QLatin1Char('}'))) {
                PyVal key, item;
                if (!value(&key, depth + 1) || !expect(QLatin1Char(':')) || !value(&item, depth + 1))
                    return false;
                out->keys << (key.kind == PyVal::Str ? key.str : QString::number(key.num));
                out->items.push_back(std::move(item));
                if (peek(QLatin1Char(',')))
                    ++m_pos;
                else if (!peek(QLatin1Char('}')))
                    return fail(QStringLiteral("expected ',' or '}'"));
            }
            ++m_pos;
            return true;
        }
        if (c.isDigit() || c == QLatin1Char('-') || c == QLatin1Char('+') || c == QLatin1Char('.')) {
            const qsizetype start = m_pos;
            ++m_pos;
            while (m_pos < m_s.size()
                   && (m_s.at(m_pos).isLetterOrNumber() || m_s.at(m_pos) == QLatin1Char('.')
                       || ((m_s.at(m_pos) == QLatin1Char('-') || m_s.at(m_pos) == QLatin1Char('+'))
                           && m_s.at(m_pos - 1).toLower() == QLatin1Char('e'))))
                ++m_pos;
            QString text = m_s.mid(start, m_pos - start).toLower();
            bool ok = false;
            if (text == QLatin1String("-inf") || text == QLatin1String("+inf")) {
                out->num = text.startsWith(QLatin1Char('-')) ? -INFINITY : INFINITY;
                ok = true;
            } else {
                out->num = text.toDouble(&ok);
            }
            if (!ok)
                return fail(QStringLiteral("bad number '%1'").arg(text));
            out->kind = PyVal::Num;
            return true;
        }
        const QString name = identifier();
        if (name.isEmpty())
            return fail(QStringLiteral("unexpected character '%1'").arg(c));
        if (name == QLatin1String("None")) {
            out->kind = PyVal::None;
            return true;
        }
        if (name == QLatin1String("True") || name == QLatin1String("False")) {
            out->kind = PyVal::Bool;
            out->boolean = name == QLatin1String("True");
            return true;
        }
        if (name == QLatin1String("inf") || name == QLatin1String("nan")) {
            out->kind = PyVal::Num;
            out->num = name == QLatin1String("inf") ? INFINITY : NaN;
            return true;
        }
        if (!peek(QLatin1Char('(')))
            return fail(QStringLiteral("unknown name '%1'").arg(name));
        ++m_pos;
        out->kind = PyVal::Call;
        out->str = name;
        int positional = 0;
        while (!peek(QLatin1Char(')'))) {
            skipSpace();
            const qsizetype save = m_pos;
            QString key = identifier();
            if (!key.isEmpty() && peek(QLatin1Char('=')) && m_s.mid(m_pos, 2) != QLatin1String("==")) {
                ++m_pos;
            } else {
                m_pos = save;
                key = QString::number(positional++);
            }
            PyVal item;
            if (!value(&item, depth + 1))
                return false;
            out->keys << key;
            out->items.push_back(std::move(item));
            if (peek(QLatin1Char(',')))
                ++m_pos;
            else if (!peek(QLatin1Char(')')))
                return fail(QStringLiteral("expected ',' or ')'"));
        }
        ++m_pos;
        if (name == QLatin1String("float") && out->items.size() == 1 && out->items[0].kind == PyVal::Str) {
            const QString t = out->items[0].str.trimmed().toLower();
            out->kind = PyVal::Num;
            out->num = t == QLatin1String("inf") || t == QLatin1String("+inf") || t == QLatin1String("infinity")
                ? INFINITY
                : t == QLatin1String("-inf") ? -INFINITY
                                             : t.toDouble();
            out->items.clear();
            out->keys.clear();
        }
        return true;
    }

    QString m_s;
    qsizetype m_pos = 0;
    QString m_error;
};

// One CodeCandidate from a candidate_K.txt.
struct ReprNode
{
    std::shared_ptr<ReprNode> parent;
    bool hasPlan = false;
    QString plan;
    QString code;
    double score = NaN;
    QStringList hwFeedback;
    QString planModel;
    QString codeModel;
    QString stdoutText;
    QString stderrText;
};

QString pyText(const PyVal *v)
{
    if (!v || v->kind == PyVal::None)
        return {};
    if (v->kind == PyVal::Str)
        return v->str;
    if (v->kind == PyVal::Num)
        return QString::number(v->num);
    return {};
}

std::shared_ptr<ReprNode> toNode(const PyVal &v, QString *error)
{
    if (v.kind != PyVal::Call || v.str != QLatin1String("CodeCandidate")) {
        *error = QStringLiteral("expected CodeCandidate(...)");
        return nullptr;
    }
    auto node = std::make_shared<ReprNode>();
    const PyVal *parent = v.arg(QStringLiteral("parent"));
    if (!parent)
        parent = v.arg(QStringLiteral("0"));
    if (parent && parent->kind == PyVal::List && !parent->items.empty())
        parent = &parent->items.front(); // combined candidates have a list of parents: keep the first
    if (parent && parent->kind != PyVal::None) {
        node->parent = toNode(*parent, error);
        if (!node->parent)
            return nullptr;
    }
    const PyVal *plan = v.arg(QStringLiteral("plan"));
    node->hasPlan = plan && plan->kind == PyVal::Str;
    node->plan = pyText(plan);
    node->code = pyText(v.arg(QStringLiteral("code")));
    if (const PyVal *s = v.arg(QStringLiteral("score")); s && s->kind == PyVal::Num)
        node->score = s->num;
    if (const PyVal *f = v.arg(QStringLiteral("hw_feedback")); f && f->kind == PyVal::List)
        for (const PyVal &item : f->items)
            node->hwFeedback << pyText(&item);
    node->planModel = pyText(v.arg(QStringLiteral("plan_gen_model")));
    node->codeModel = pyText(v.arg(QStringLiteral("code_gen_model")));
    if (node->planModel == QLatin1String("None"))
        node->planModel.clear();
    if (node->codeModel == QLatin1String("None"))
        node->codeModel.clear();
    node->stdoutText = pyText(v.arg(QStringLiteral("stdout")));
    node->stderrText = pyText(v.arg(QStringLiteral("stderr")));
    return node;
}

// ---------------------------------------------------------------------------------------------
// Files.

bool writeText(const QString &path, const QString &text, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0 || !file.commit()) {
        *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool writeJson(const QString &path, const QJsonObject &o, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(o).toJson(QJsonDocument::Indented)) < 0
        || !file.commit()) {
        *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

std::optional<QString> readText(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    return QString::fromUtf8(file.readAll());
}

// Reads a JSON object; a missing file is {} with *present = false.
std::optional<QJsonObject> readJsonObject(const QString &path, QString *error, bool *present = nullptr)
{
    if (present)
        *present = QFileInfo::exists(path);
    if (!QFileInfo::exists(path))
        return QJsonObject();
    const auto text = readText(path, error);
    if (!text)
        return std::nullopt;
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(text->toUtf8(), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = QStringLiteral("%1: invalid JSON at offset %2: %3")
                     .arg(path)
                     .arg(parseError.offset)
                     .arg(parseError.errorString());
        return std::nullopt;
    }
    if (!doc.isObject()) {
        *error = QStringLiteral("%1: expected a JSON object").arg(path);
        return std::nullopt;
    }
    return doc.object();
}

// "openai::gpt-5.2" -> "gpt-5.2"; Autocomp names files by the model without its provider, '/' made '_'.
QString fileModel(const QString &model)
{
    QString m = model.section(QStringLiteral("::"), -1);
    m.replace(QLatin1Char('/'), QLatin1Char('_'));
    m.replace(QLatin1Char('\\'), QLatin1Char('_'));
    if (m.isEmpty())
        m = QStringLiteral("unknown");
    return m;
}

bool lessScore(const Candidate &a, const Candidate &b)
{
    const double sa = a.hasScore() ? a.score : INFINITY;
    const double sb = b.hasScore() ? b.score : INFINITY;
    if (sa != sb)
        return sa < sb;
    return a.id < b.id;
}

QString guessExtension(const QString &code)
{
    if (code.contains(QLatin1String("#include")) || code.contains(QLatin1String("__global__")))
        return QStringLiteral(".cpp");
    if (code.contains(QLatin1String("import ")) || code.contains(QLatin1String("def ")))
        return QStringLiteral(".py");
    return QStringLiteral(".txt");
}

struct Usage
{
    qint64 calls = 0;
    qint64 in = 0;
    qint64 out = 0;
    double ms = 0;
};

QJsonObject usageJson(const QMap<QString, Usage> &byModel)
{
    QJsonObject o;
    for (auto it = byModel.begin(); it != byModel.end(); ++it)
        o.insert(it.key(),
                 QJsonObject{{QStringLiteral("calls"), it->calls},
                             {QStringLiteral("input_tokens"), it->in},
                             {QStringLiteral("output_tokens"), it->out},
                             {QStringLiteral("duration_s"), std::round(it->ms) / 1000.0}});
    return o;
}

} // namespace

// =============================================================================================
// Export

bool exportAutocompDir(RunStore &store, qint64 runId, const QString &dirPath, QString *error)
{
    const auto run = store.run(runId);
    if (!run) {
        *error = QStringLiteral("no run %1 in %2").arg(runId).arg(store.path());
        return false;
    }
    QDir dir(dirPath);
    if (dir.exists() && !dir.isEmpty()) {
        *error = QStringLiteral("%1: the directory is not empty").arg(dirPath);
        return false;
    }
    if (!QDir().mkpath(dirPath)) {
        *error = QStringLiteral("%1: cannot create the directory").arg(dirPath);
        return false;
    }
    auto sub = [&](const QString &name) -> QString {
        QDir().mkpath(dir.filePath(name));
        return dir.filePath(name);
    };

    const QList<Candidate> all = store.candidates(runId);
    QHash<qint64, Candidate> byId;
    for (const Candidate &c : all)
        byId.insert(c.id, c);
    QHash<qint64, LlmCall> callById;
    QHash<qint64, LlmCall> codeCallOf; // candidate id -> its latest code call
    for (const LlmCall &call : store.llmCalls(runId)) {
        callById.insert(call.id, call);
        // Only the calls that wrote a candidate's code; a parent's own calls (isa filter, one-shot menu, example
        // selection) and the plan and score calls are not its code.
        static const QSet<QString> s_codePhases{QStringLiteral("code"), QStringLiteral("fix"),
                                                QStringLiteral("direct")};
        if (call.candidateId && s_codePhases.contains(call.phase))
            codeCallOf.insert(call.candidateId, call);
    }

    int lastIteration = run->iteration;
    for (const Candidate &c : all)
        lastIteration = std::max(lastIteration, c.iteration);

    // The beam after each iteration. Only the last one is stored (in_beam); an earlier one is exactly the set of
    // parents that the next iteration's candidates grew from. Autocomp lists a beam best first.
    QList<Candidate> roots;
    for (const Candidate &c : all)
        if (c.origin == CandidateOrigin::Root || c.parentId == 0)
            roots << c;
    std::sort(roots.begin(), roots.end(), [](const Candidate &a, const Candidate &b) { return a.id < b.id; });
    QList<QList<Candidate>> beams;
    beams << roots;
    for (int n = 1; n <= lastIteration; ++n) {
        QList<Candidate> beam;
        QSet<qint64> seen;
        if (n == lastIteration) {
            for (const Candidate &c : all)
                if (c.inBeam)
                    beam << c;
        } else {
            for (const Candidate &c : all)
                if (c.iteration == n + 1 && c.parentId && byId.contains(c.parentId) && !seen.contains(c.parentId)) {
                    seen.insert(c.parentId);
                    beam << byId.value(c.parentId);
                }
        }
        if (beam.isEmpty())
            beam = beams.last();
        std::sort(beam.begin(), beam.end(), lessScore);
        beams << beam;
    }

    std::function<QString(const Candidate &, int)> repr = [&](const Candidate &c, int depth) -> QString {
        const bool hasParent = c.parentId && byId.contains(c.parentId) && depth < 10000;
        QStringList feedback;
        for (const QString &f : c.feedback)
            feedback << pyString(f);
        return QStringLiteral(
                   "CodeCandidate(parent=%1,\nplan=%2,\ncode=%3,\nscore=%4,\ntranslation_score=%5,\nhw_feedback=[%6],\n"
                   "plan_gen_model=%7,\ncode_gen_model=%8,\nstdout=None,\nstderr=%9)")
            .arg(hasParent ? repr(byId.value(c.parentId), depth + 1) : QStringLiteral("None"),
                 c.origin == CandidateOrigin::Root ? QStringLiteral("None") : pyTriple(c.plan), pyTriple(c.code),
                 c.hasScore() && c.status == CandidateStatus::Correct ? pyFloat(c.score)
                                                                      : QStringLiteral("float('inf')"),
                 c.metrics.contains(QStringLiteral("translation_score"))
                     ? pyFloat(c.metrics.value(QStringLiteral("translation_score")).toDouble())
                     : QStringLiteral("None"),
                 feedback.join(QStringLiteral(", ")),
                 c.planModel.isEmpty() ? QStringLiteral("None") : pyString(fileModel(c.planModel)),
                 c.codeModel.isEmpty() ? QStringLiteral("None") : pyString(fileModel(c.codeModel)),
                 c.error.isEmpty() ? QStringLiteral("None") : pyString(c.error));
    };

    for (int n = 0; n < beams.size(); ++n) {
        const QString d = sub(QStringLiteral("candidates-iter-%1").arg(n));
        for (int k = 0; k < beams[n].size(); ++k)
            if (!writeText(QDir(d).filePath(QStringLiteral("candidate_%1.txt").arg(k)), repr(beams[n][k], 0), error))
                return false;
    }

    auto resultJson = [&](const Candidate &c) {
        QJsonObject o = c.metrics;
        const bool correct = c.status == CandidateStatus::Correct && c.hasScore();
        o.insert(QStringLiteral("correct"), correct);
        o.insert(QStringLiteral("compiled"), c.status != CandidateStatus::CompileError);
        if (correct)
            o.insert(QStringLiteral("latency"), c.score);
        else
            o.insert(QStringLiteral("latency"), QJsonValue::Null);
        o.insert(QStringLiteral("stdout"), QString());
        o.insert(QStringLiteral("stderr"), c.error);
        o.insert(QStringLiteral("status"), toString(c.status));
        if (!c.feedback.isEmpty())
            o.insert(QStringLiteral("feedback"), QJsonArray::fromStringList(c.feedback));
        return o;
    };

    // The original code's evaluation.
    if (!roots.isEmpty()) {
        const QString d = sub(QStringLiteral("eval-results-iter-0"));
        for (int i = 0; i < roots.size(); ++i)
            if (!writeJson(QDir(d).filePath(QStringLiteral("code_%1_result.txt").arg(i)), resultJson(roots[i]), error))
                return false;
    }

    QJsonArray iterationMetrics;
    qint64 totalIn = 0, totalOut = 0;
    double totalLlmS = 0, totalEvalS = 0, totalS = 0;
    QSet<QString> planModels, codeModels;
    for (int n = 1; n <= lastIteration; ++n) {
        const QList<Candidate> &parents = beams[n - 1];
        auto parentIndex = [&](qint64 id) -> int {
            for (int i = 0; i < parents.size(); ++i)
                if (parents[i].id == id)
                    return i;
            return -1;
        };
        QList<Candidate> cands;
        for (const Candidate &c : all)
            if (c.iteration == n && c.origin != CandidateOrigin::Root && c.origin != CandidateOrigin::Fix
                && c.origin != CandidateOrigin::Human && parentIndex(c.parentId) >= 0)
                cands << c;
        std::sort(cands.begin(), cands.end(), [](const Candidate &a, const Candidate &b) {
            return std::tie(a.planSlot, a.sample, a.id) < std::tie(b.planSlot, b.sample, b.id);
        });

        // Plans: one per plan call (or plan slot).
        struct Plan
        {
            QString key;
            int parent = 0;
            QString model;
            int slot = 0;
            int sample = 0;
            QString text;
            qint64 callId = 0;
            QList<Candidate> impls;
        };
        QList<Plan> plans;
        QHash<QString, int> planIndex;
        for (const Candidate &c : cands) {
            const QString key = c.planCallId ? QStringLiteral("call%1").arg(c.planCallId)
                : c.planSlot >= 0            ? QStringLiteral("slot%1").arg(c.planSlot)
                                             : QStringLiteral("cand%1").arg(c.id);
            if (!planIndex.contains(key)) {
                planIndex.insert(key, int(plans.size()));
                plans << Plan{key, parentIndex(c.parentId), fileModel(c.planModel), c.planSlot, 0, c.plan, c.planCallId,
                              {}};
            }
            plans[planIndex.value(key)].impls << c;
        }
        // A failed plan request has no plan: Autocomp has no file for it.
        plans.removeIf([](const Plan &p) { return p.text.isEmpty(); });
        // S: the sample index per (parent, model), in plan-slot order. Q: model-major, then parent, then sample.
        {
            QHash<QString, int> counter;
            for (Plan &p : plans)
                p.sample = counter[QStringLiteral("%1\x1f%2").arg(p.parent).arg(p.model)]++;
        }
        std::stable_sort(plans.begin(), plans.end(), [](const Plan &a, const Plan &b) {
            return std::tie(a.model, a.parent, a.sample) < std::tie(b.model, b.parent, b.sample);
        });

        QMap<QString, Usage> planUsage, codeUsage;
        double evalMs = 0;
        const QString planDir = sub(QStringLiteral("generated-plans-iter-%1").arg(n));
        const QString codeDir = sub(QStringLiteral("generated-code-iter-%1").arg(n));
        struct Impl
        {
            QString model;
            int q = 0;
            int sample = 0;
            Candidate c;
        };
        QList<Impl> impls;
        for (int q = 0; q < plans.size(); ++q) {
            const Plan &p = plans[q];
            planModels.insert(p.model);
            const QString stem = QStringLiteral("parent%1_%2_%3").arg(p.parent).arg(p.model).arg(p.sample);
            if (p.callId && callById.contains(p.callId)) {
                const LlmCall &call = callById[p.callId];
                Usage &u = planUsage[p.model];
                ++u.calls, u.in += call.tokensIn, u.out += call.tokensOut, u.ms += call.latencyMs;
                if (!writeText(QDir(planDir).filePath(QStringLiteral("prompt_%1.txt").arg(stem)), call.prompt, error))
                    return false;
                if (!call.response.isEmpty() && call.response != p.text
                    && !writeText(QDir(planDir).filePath(QStringLiteral("plan_%1_full.txt").arg(stem)), call.response,
                                  error))
                    return false;
            }
            if (!p.text.isEmpty()
                && !writeText(QDir(planDir).filePath(QStringLiteral("plan_%1.txt").arg(stem)), p.text, error))
                return false;
            QHash<QString, int> counter;
            QList<Candidate> sorted = p.impls;
            std::stable_sort(sorted.begin(), sorted.end(), [](const Candidate &a, const Candidate &b) {
                return std::tie(a.sample, a.id) < std::tie(b.sample, b.id);
            });
            for (const Candidate &c : sorted) {
                if (c.code.isEmpty())
                    continue; // a failed plan request or a plan still waiting for code
                const QString model = fileModel(c.codeModel);
                codeModels.insert(model);
                const int s = counter[model]++;
                impls << Impl{model, q, s, c};
                const QString base = QStringLiteral("%1_%2_%3").arg(p.parent).arg(q).arg(model);
                const LlmCall call = codeCallOf.value(c.id);
                if (call.id) {
                    Usage &u = codeUsage[model];
                    ++u.calls, u.in += call.tokensIn, u.out += call.tokensOut, u.ms += call.latencyMs;
                    const QString promptPath = QDir(codeDir).filePath(QStringLiteral("prompt_%1.txt").arg(base));
                    if (!QFileInfo::exists(promptPath) && !writeText(promptPath, call.prompt, error))
                        return false;
                }
                if (!writeText(QDir(codeDir).filePath(QStringLiteral("impl_%1_%2.txt").arg(base).arg(s)), c.code,
                               error))
                    return false;
                // Autocomp resumes from the _full response (it extracts the last fenced block).
                const QString full = !call.response.isEmpty() ? call.response
                                                              : QStringLiteral("```\n%1\n```\n").arg(c.code);
                if (!writeText(QDir(codeDir).filePath(QStringLiteral("impl_%1_%2_full.txt").arg(base).arg(s)), full,
                               error))
                    return false;
            }
        }
        std::stable_sort(impls.begin(), impls.end(), [](const Impl &a, const Impl &b) {
            return std::tie(a.model, a.q, a.sample) < std::tie(b.model, b.q, b.sample);
        });
        const QString evalDir = sub(QStringLiteral("eval-results-iter-%1").arg(n));
        for (int i = 0; i < impls.size(); ++i) {
            if (!writeJson(QDir(evalDir).filePath(QStringLiteral("code_%1_result.txt").arg(i)), resultJson(impls[i].c),
                           error))
                return false;
            for (const StepResult &step : store.evaluationSteps(impls[i].c.id))
                evalMs += step.durationMs;
        }

        // Repairs: Autocomp's reimplemented-code-iter-N/reimplement_failed_K_MODEL_S.txt, K indexing the failed
        // implementations that left output (in code_I order), evaluated into
        // eval-reimplemented-results-iter-N/code_J_result.txt (J: model, then K, then S).
        {
            QList<qint64> failed;
            for (const Impl &im : std::as_const(impls))
                if (!(im.c.status == CandidateStatus::Correct && im.c.hasScore()) && !im.c.error.isEmpty())
                    failed << im.c.id;
            struct Fix
            {
                QString model;
                int k = 0;
                int sample = 0;
                Candidate c;
            };
            QList<Fix> fixes;
            QHash<QString, int> counter;
            QList<Candidate> fixCands;
            for (const Candidate &c : all)
                if (c.iteration == n && c.origin == CandidateOrigin::Fix && !c.code.isEmpty())
                    fixCands << c;
            // Which failed implementation a repair is for: fix_of; in archives older than fix_of, the first failed
            // implementation of the same plan not yet repaired.
            QSet<qint64> repaired;
            for (const Candidate &c : std::as_const(fixCands)) {
                qint64 target = failed.contains(c.fixOf) ? c.fixOf : 0;
                for (int pass = 0; !target && pass < 2; ++pass)
                    for (qint64 id : std::as_const(failed)) {
                        const Candidate &f = byId[id];
                        if (!repaired.contains(id) && f.parentId == c.parentId
                            && (pass == 1 || f.planCallId == c.planCallId)) {
                            target = id;
                            break;
                        }
                    }
                if (!target)
                    continue;
                repaired.insert(target);
                const QString model = fileModel(c.codeModel);
                const int k = int(failed.indexOf(target));
                fixes << Fix{model, k, counter[QStringLiteral("%1\x1f%2").arg(k).arg(model)]++, c};
            }
            std::stable_sort(fixes.begin(), fixes.end(), [](const Fix &a, const Fix &b) {
                return std::tie(a.model, a.k, a.sample) < std::tie(b.model, b.k, b.sample);
            });
            if (!fixes.isEmpty()) {
                const QString fixDir = sub(QStringLiteral("reimplemented-code-iter-%1").arg(n));
                const QString fixEvalDir = sub(QStringLiteral("eval-reimplemented-results-iter-%1").arg(n));
                for (int j = 0; j < fixes.size(); ++j) {
                    const Fix &f = fixes[j];
                    const QString base = QStringLiteral("failed_%1_%2").arg(f.k).arg(f.model);
                    const LlmCall call = codeCallOf.value(f.c.id);
                    if (call.id) {
                        Usage &u = codeUsage[f.model];
                        ++u.calls, u.in += call.tokensIn, u.out += call.tokensOut, u.ms += call.latencyMs;
                        const QString promptPath = QDir(fixDir).filePath(
                            QStringLiteral("reimplement_prompt_%1.txt").arg(base));
                        if (!QFileInfo::exists(promptPath) && !writeText(promptPath, call.prompt, error))
                            return false;
                    }
                    const QString full = !call.response.isEmpty() ? call.response
                                                                  : QStringLiteral("```\n%1\n```\n").arg(f.c.code);
                    if (!writeText(
                            QDir(fixDir).filePath(QStringLiteral("reimplement_%1_%2.txt").arg(base).arg(f.sample)),
                            f.c.code, error)
                        || !writeText(
                            QDir(fixDir).filePath(QStringLiteral("reimplement_%1_%2_full.txt").arg(base).arg(f.sample)),
                            full, error)
                        || !writeJson(QDir(fixEvalDir).filePath(QStringLiteral("code_%1_result.txt").arg(j)),
                                      resultJson(f.c), error))
                        return false;
                    for (const StepResult &step : store.evaluationSteps(f.c.id))
                        evalMs += step.durationMs;
                }
            }
        }

        double planMs = 0, codeMs = 0;
        for (const Usage &u : planUsage)
            planMs += u.ms, totalIn += u.in, totalOut += u.out;
        for (const Usage &u : codeUsage)
            codeMs += u.ms, totalIn += u.in, totalOut += u.out;
        // Wall-clock durations are not stored; these are the sums of the calls' latencies and the steps' durations.
        const double iterS = (planMs + codeMs + evalMs) / 1000.0;
        QJsonObject m{{QStringLiteral("iteration"), n},
                      {QStringLiteral("plan_duration_s"), std::round(planMs) / 1000.0},
                      {QStringLiteral("code_duration_s"), std::round(codeMs) / 1000.0},
                      {QStringLiteral("evaluation"),
                       QJsonObject{{QStringLiteral("duration_s"), std::round(evalMs) / 1000.0},
                                   {QStringLiteral("num_candidates"), int(impls.size())}}},
                      {QStringLiteral("plan_generation"), usageJson(planUsage)},
                      {QStringLiteral("code_generation"), usageJson(codeUsage)},
                      {QStringLiteral("iteration_total_s"), std::round(iterS * 1000) / 1000.0}};
        if (!writeJson(dir.filePath(QStringLiteral("metrics-iter-%1.json").arg(n)), m, error))
            return false;
        iterationMetrics.append(m);
        totalLlmS += (planMs + codeMs) / 1000.0;
        totalEvalS += evalMs / 1000.0;
        totalS += iterS;
    }

    // Best: the run's own record, else the lowest correct score.
    std::optional<Candidate> best;
    if (run->bestCandidateId && byId.contains(run->bestCandidateId)) {
        best = byId.value(run->bestCandidateId);
    } else {
        for (const Candidate &c : all)
            if (c.status == CandidateStatus::Correct && c.hasScore() && (!best || c.score < best->score))
                best = c;
    }

    QJsonObject runMetrics{{QStringLiteral("run_total_s"), std::round(totalS * 1000) / 1000.0},
                           {QStringLiteral("iterations"), iterationMetrics},
                           {QStringLiteral("total_input_tokens"), totalIn},
                           {QStringLiteral("total_output_tokens"), totalOut},
                           {QStringLiteral("total_llm_duration_s"), std::round(totalLlmS * 1000) / 1000.0},
                           {QStringLiteral("total_eval_duration_s"), std::round(totalEvalS * 1000) / 1000.0}};
    if (best && best->hasScore())
        runMetrics.insert(QStringLiteral("best_score"), best->score);
    if (!writeJson(dir.filePath(QStringLiteral("run_metrics.json")), runMetrics, error))
        return false;

    QStringList planList(planModels.begin(), planModels.end()), codeList(codeModels.begin(), codeModels.end());
    planList.sort();
    codeList.sort();
    QJsonObject metadata{{QStringLiteral("problem"), run->problem},
                         {QStringLiteral("metric"), QStringLiteral("latency")},
                         {QStringLiteral("plan_models"), QJsonArray::fromStringList(planList)},
                         {QStringLiteral("code_models"), QJsonArray::fromStringList(codeList)},
                         {QStringLiteral("beam_size"), beams.isEmpty() ? 0 : int(beams.last().size())},
                         {QStringLiteral("autocomp_workbench"),
                          QJsonObject{{QStringLiteral("run_id"), run->id},
                                      {QStringLiteral("target"), run->target},
                                      {QStringLiteral("problem"), run->problem},
                                      {QStringLiteral("agent"), run->agent},
                                      {QStringLiteral("label"), run->label},
                                      {QStringLiteral("metric"), run->metric},
                                      {QStringLiteral("unit"), MetricUnits::declared(run->metric)},
                                      {QStringLiteral("state"), toString(run->state)},
                                      {QStringLiteral("stop_reason"), run->stopReason},
                                      {QStringLiteral("config_yaml"), run->configYaml},
                                      {QStringLiteral("usd"), run->usd},
                                      {QStringLiteral("schedule"), QJsonArray::fromStringList(run->schedule)}}}};
    if (!writeJson(dir.filePath(QStringLiteral("run_metadata.json")), metadata, error))
        return false;

    if (best) {
        const QString ext = guessExtension(best->code);
        if (!writeText(dir.filePath(QStringLiteral("best_candidate_so_far") + ext), best->code, error))
            return false;
    }
    return true;
}

// =============================================================================================
// Import

bool isAutocompDir(const QString &path)
{
    return QFileInfo(path).isDir() && QFileInfo(QDir(path).filePath(QStringLiteral("candidates-iter-0"))).isDir();
}

namespace {

struct Importer
{
    Importer(RunStore &s, const QString &path, QString *e) : store(s), dir(path), error(e) {}

    RunStore &store;
    QDir dir;
    QString *error;
    qint64 runId = 0;
    QString metric = QStringLiteral("latency");
    QHash<QString, QString> providerOf; // file model -> provider
    QList<Candidate> created; // everything added, in order (kept current)
    qint64 llmCalls = 0;

    bool fail(const QString &message)
    {
        *error = message;
        return false;
    }

    QString path(const QString &rel) const { return dir.filePath(rel); }

    qint64 addCall(const QString &phase, const QString &model, const QString &prompt, const QString &response,
                   qint64 candidateId)
    {
        LlmCall call;
        call.runId = runId;
        call.candidateId = candidateId;
        call.phase = phase;
        call.model = model;
        call.provider = providerOf.value(model);
        call.prompt = prompt;
        call.response = response;
        call.status = QStringLiteral("ok");
        call.createdAt = QDateTime::currentDateTimeUtc();
        const qint64 id = store.addLlmCall(call);
        if (id)
            ++llmCalls;
        return id;
    }

    qint64 add(Candidate c)
    {
        c.runId = runId;
        c.id = store.addCandidate(c);
        if (c.id)
            created << c;
        return c.id;
    }

    // Status, score and metrics from an eval-results JSON object.
    void applyResult(Candidate &c, const QJsonObject &o)
    {
        const bool correct = o.value(QStringLiteral("correct")).toBool();
        double value = NaN;
        for (const QString &key : {metric, QStringLiteral("latency")}) {
            const QJsonValue v = o.value(key);
            if (v.isDouble()) {
                value = v.toDouble();
                break;
            }
            if (v.isObject() && v.toObject().value(QStringLiteral("median")).isDouble()) {
                value = v.toObject().value(QStringLiteral("median")).toDouble();
                break;
            }
        }
        const QString ours = o.value(QStringLiteral("status")).toString();
        if (correct && !std::isnan(value)) {
            c.status = CandidateStatus::Correct;
            c.score = value;
        } else if (!ours.isEmpty() && toString(candidateStatusFromString(ours)) == ours && !correct) {
            c.status = candidateStatusFromString(ours);
        } else if (o.contains(QStringLiteral("compiled")) && !o.value(QStringLiteral("compiled")).toBool(true)) {
            c.status = CandidateStatus::CompileError;
        } else if (correct) {
            c.status = CandidateStatus::Failed;
            c.error = QStringLiteral("correct, but the result has no \"%1\"").arg(metric);
        } else {
            c.status = CandidateStatus::Incorrect;
        }
        QJsonObject metrics = o;
        for (const char *key : {"correct", "stdout", "stderr", "status", "feedback", "compiled"})
            metrics.remove(QLatin1String(key));
        c.metrics = metrics;
        QString text = o.value(QStringLiteral("stderr")).toString().trimmed();
        if (text.isEmpty() && c.status != CandidateStatus::Correct)
            text = o.value(QStringLiteral("stdout")).toString().trimmed();
        if (!text.isEmpty())
            c.error = text.right(4000);
        for (const QJsonValue &f : o.value(QStringLiteral("feedback")).toArray())
            c.feedback << f.toString();
    }

    // Reads candidates-iter-N/ (K order); false on a malformed file. Missing directory: empty list, *present false.
    // Reads a candidate's code file and its evaluation result (a missing result marks it failed) and stores
    // it. 0 (with `error` set) when a file is unreadable or malformed or the store refuses it.
    qint64 addEvaluated(Candidate &c, const QString &codeFile, const QDir &evalDir, const QString &resultName,
                        bool *present, QJsonObject *result)
    {
        const auto code = readText(codeFile, error);
        if (!code)
            return 0;
        c.code = *code;
        const auto parsed = readJsonObject(evalDir.filePath(resultName), error, present);
        if (!parsed)
            return 0;
        *result = *parsed;
        if (*present) {
            applyResult(c, *parsed);
        } else {
            c.status = CandidateStatus::Failed;
            c.error = QStringLiteral("no evaluation result in %1").arg(evalDir.path());
        }
        const qint64 id = add(c);
        if (!id)
            fail(QStringLiteral("%1: cannot store the candidate: %2").arg(codeFile, store.lastError()));
        return id;
    }

    bool readBeam(int n, QList<std::shared_ptr<ReprNode>> *out, bool *present)
    {
        const QDir d(path(QStringLiteral("candidates-iter-%1").arg(n)));
        *present = d.exists();
        if (!*present)
            return true;
        static const QRegularExpression re(QStringLiteral("^candidate_(\\d+)\\.txt$"));
        QMap<int, QString> files;
        for (const QString &name : d.entryList(QDir::Files)) {
            const auto m = re.match(name);
            if (m.hasMatch())
                files.insert(m.captured(1).toInt(), name);
        }
        for (const QString &name : files) {
            const QString file = d.filePath(name);
            const auto text = readText(file, error);
            if (!text)
                return false;
            PyVal value;
            QString why;
            if (!PyReader(*text).read(&value, &why))
                return fail(QStringLiteral("%1: not a CodeCandidate repr: %2").arg(file, why));
            auto node = toNode(value, &why);
            if (!node)
                return fail(QStringLiteral("%1: %2").arg(file, why));
            *out << node;
        }
        return true;
    }

    static QString lossy(const QString &code)
    {
        // What Autocomp's own eval(repr(code)) gives back: it escapes quotes only, so escapes in the code are decoded.
        PyVal v;
        QString why;
        const QString literal = QStringLiteral("'''") + QString(code).replace(QLatin1Char('\''), QLatin1String("\\'"))
            + QStringLiteral("'''");
        if (PyReader(literal).read(&v, &why) && v.kind == PyVal::Str)
            return v.str;
        return code;
    }

    // The stored candidate a repr node stands for, created when the directory has no other record of it.
    qint64 resolve(const std::shared_ptr<ReprNode> &node, int iteration)
    {
        const qint64 parentId = node->parent ? resolve(node->parent, std::max(0, iteration - 1)) : 0;
        if (node->parent && !parentId)
            return 0;
        // Same parent, code and plan; among equals (identical code happens), the one with the same score first.
        for (int pass = 0; pass < 2; ++pass)
            for (const Candidate &c : std::as_const(created)) {
                if (c.parentId != parentId || (parentId == 0) != (c.origin == CandidateOrigin::Root))
                    continue;
                if (pass == 0
                    && !(c.hasScore() && !std::isnan(node->score)
                         && std::abs(c.score - node->score) <= 1e-9 * std::max(1.0, std::abs(c.score))))
                    continue;
                if (c.code != node->code && lossy(c.code) != node->code)
                    continue;
                if (node->hasPlan && parentId && !c.plan.isEmpty() && c.plan != node->plan
                    && lossy(c.plan) != node->plan)
                    continue;
                return c.id;
            }
        Candidate c;
        c.parentId = parentId;
        c.origin = parentId ? CandidateOrigin::Llm : CandidateOrigin::Root;
        int parentIteration = -1;
        for (const Candidate &p : std::as_const(created))
            if (p.id == parentId)
                parentIteration = p.iteration;
        c.iteration = parentId ? std::max(iteration, parentIteration + 1) : 0;
        c.plan = node->plan;
        c.code = node->code;
        c.planModel = node->planModel;
        c.codeModel = node->codeModel;
        c.feedback = node->hwFeedback;
        if (!std::isnan(node->score) && !std::isinf(node->score)) {
            c.status = CandidateStatus::Correct;
            c.score = node->score;
        } else {
            c.status = CandidateStatus::Incorrect;
        }
        c.error = node->stderrText.right(4000);
        return add(c);
    }

    std::optional<QString> optionalText(const QString &file)
    {
        if (!QFileInfo::exists(file))
            return QString();
        return readText(file, error);
    }

    bool importIteration(int n, const QList<qint64> &parents)
    {
        const QDir planDir(path(QStringLiteral("generated-plans-iter-%1").arg(n)));
        const QDir codeDir(path(QStringLiteral("generated-code-iter-%1").arg(n)));
        const QDir evalDir(path(QStringLiteral("eval-results-iter-%1").arg(n)));

        struct Plan
        {
            int parent = 0;
            QString model;
            int sample = 0;
            QString file;
        };
        QList<Plan> plans;
        static const QRegularExpression planRe(QStringLiteral("^plan_parent(\\d+)_(.+)_(\\d+)\\.txt$"));
        for (const QString &name : planDir.entryList(QDir::Files, QDir::Name)) {
            const auto m = planRe.match(name);
            if (m.hasMatch())
                plans << Plan{m.captured(1).toInt(), m.captured(2), m.captured(3).toInt(), planDir.filePath(name)};
        }
        struct Impl
        {
            int parent = 0;
            int q = 0;
            QString model;
            int sample = 0;
            QString file;
        };
        QList<Impl> impls;
        static const QRegularExpression implRe(QStringLiteral("^impl_(\\d+)_(\\d+)_(.+)_(\\d+)\\.txt$"));
        for (const QString &name : codeDir.entryList(QDir::Files, QDir::Name)) {
            const auto m = implRe.match(name);
            if (m.hasMatch())
                impls << Impl{m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3), m.captured(4).toInt(),
                              codeDir.filePath(name)};
        }
        for (const Plan &p : std::as_const(plans))
            if (p.parent >= parents.size())
                return fail(QStringLiteral("%1: parent %2 does not exist: candidates-iter-%3 has %4 candidates")
                                .arg(p.file)
                                .arg(p.parent)
                                .arg(n - 1)
                                .arg(parents.size()));
        for (const Impl &i : std::as_const(impls))
            if (i.parent >= parents.size())
                return fail(QStringLiteral("%1: parent %2 does not exist: candidates-iter-%3 has %4 candidates")
                                .arg(i.file)
                                .arg(i.parent)
                                .arg(n - 1)
                                .arg(parents.size()));

        // Q order: model-major (the ensemble's order, which the files do not record: the first order, alphabetical
        // first, under which every implementation's Q points at a plan of its own parent), then parent, then sample.
        QStringList models;
        for (const Plan &p : std::as_const(plans))
            if (!models.contains(p.model))
                models << p.model;
        models.sort();
        auto order = [&](const QStringList &modelOrder) {
            QList<int> q;
            for (const QString &m : modelOrder) {
                QList<int> mine;
                for (int i = 0; i < plans.size(); ++i)
                    if (plans[i].model == m)
                        mine << i;
                std::sort(mine.begin(), mine.end(), [&](int a, int b) {
                    return std::tie(plans[a].parent, plans[a].sample) < std::tie(plans[b].parent, plans[b].sample);
                });
                q << mine;
            }
            return q;
        };
        QList<int> qToPlan = order(models);
        QStringList chosen = models;
        if (models.size() > 1 && models.size() <= 6) {
            QStringList perm = models;
            do {
                const QList<int> candidate = order(perm);
                bool consistent = true;
                for (const Impl &i : std::as_const(impls))
                    consistent = consistent && i.q < candidate.size() && plans[candidate[i.q]].parent == i.parent;
                if (consistent) {
                    qToPlan = candidate;
                    chosen = perm;
                    break;
                }
            } while (std::next_permutation(perm.begin(), perm.end()));
        }

        // Plans become plan calls; their text goes to each implementation.
        QHash<int, qint64> planCall; // plan index -> call id
        QHash<int, QString> planText;
        for (int i = 0; i < plans.size(); ++i) {
            const Plan &p = plans[i];
            const auto text = readText(p.file, error);
            if (!text)
                return false;
            planText.insert(i, *text);
            const QString stem = QStringLiteral("parent%1_%2_").arg(p.parent).arg(p.model);
            auto full = optionalText(planDir.filePath(QStringLiteral("plan_%1%2_full.txt").arg(stem).arg(p.sample)));
            if (!full)
                return false;
            QString promptFile = planDir.filePath(QStringLiteral("prompt_%1%2.txt").arg(stem).arg(p.sample));
            if (!QFileInfo::exists(promptFile))
                promptFile = planDir.filePath(QStringLiteral("prompt_%1%2.txt").arg(stem).arg(0));
            auto prompt = optionalText(promptFile);
            if (!prompt)
                return false;
            const qint64 call = addCall(QStringLiteral("plan"), p.model, *prompt, full->isEmpty() ? *text : *full, 0);
            if (!call)
                return fail(QStringLiteral("%1: cannot store the plan call: %2").arg(p.file, store.lastError()));
            planCall.insert(i, call);
        }

        // I order: code model (same ensemble order as the plans when the models are the same), then Q, then sample.
        QStringList codeModels;
        for (const Impl &i : std::as_const(impls))
            if (!codeModels.contains(i.model))
                codeModels << i.model;
        codeModels.sort();
        {
            QStringList sortedChosen = chosen;
            sortedChosen.sort();
            if (sortedChosen == codeModels)
                codeModels = chosen;
        }
        std::stable_sort(impls.begin(), impls.end(), [&](const Impl &a, const Impl &b) {
            const auto ma = codeModels.indexOf(a.model), mb = codeModels.indexOf(b.model);
            return std::tie(ma, a.q, a.sample) < std::tie(mb, b.q, b.sample);
        });

        QSet<int> implemented;
        QList<Candidate> failedWithOutput; // Autocomp's failed_candidates: wrong, and stdout or stderr to show
        for (int index = 0; index < impls.size(); ++index) {
            const Impl &im = impls[index];
            const int planIdx = im.q < qToPlan.size() && plans[qToPlan[im.q]].parent == im.parent ? qToPlan[im.q] : -1;
            Candidate c;
            c.parentId = parents.at(im.parent);
            c.iteration = n;
            c.origin = CandidateOrigin::Llm;
            c.codeModel = im.model;
            c.sample = im.sample;
            c.planSlot = im.q;
            if (planIdx >= 0) {
                implemented.insert(planIdx);
                c.plan = planText.value(planIdx);
                c.planModel = plans[planIdx].model;
                c.planCallId = planCall.value(planIdx);
            }
            bool present = false;
            QJsonObject resultObject;
            const qint64 id = addEvaluated(c, im.file, evalDir, QStringLiteral("code_%1_result.txt").arg(index),
                                           &present, &resultObject);
            if (!id)
                return false;
            if (present && !(c.status == CandidateStatus::Correct)
                && (!resultObject.value(QStringLiteral("stdout")).toString().isEmpty()
                    || !resultObject.value(QStringLiteral("stderr")).toString().isEmpty())) {
                c.id = id;
                failedWithOutput << c;
            }
            const QString base = QStringLiteral("%1_%2_%3").arg(im.parent).arg(im.q).arg(im.model);
            QString promptFile = codeDir.filePath(QStringLiteral("prompt_%1_%2.txt").arg(base).arg(im.sample));
            if (!QFileInfo::exists(promptFile))
                promptFile = codeDir.filePath(QStringLiteral("prompt_%1.txt").arg(base));
            auto prompt = optionalText(promptFile);
            auto full = optionalText(codeDir.filePath(QStringLiteral("impl_%1_%2_full.txt").arg(base).arg(im.sample)));
            if (!prompt || !full)
                return false;
            if (!addCall(QStringLiteral("code"), im.model, *prompt, full->isEmpty() ? c.code : *full, id))
                return fail(QStringLiteral("%1: cannot store the code call: %2").arg(im.file, store.lastError()));
        }
        if (!importRepairs(n, failedWithOutput))
            return false;
        // Plans nobody implemented (the run stopped, or the code request failed) stay visible.
        for (int i = 0; i < plans.size(); ++i) {
            if (implemented.contains(i))
                continue;
            Candidate c;
            c.parentId = parents.at(plans[i].parent);
            c.iteration = n;
            c.origin = CandidateOrigin::Llm;
            c.plan = planText.value(i);
            c.planModel = plans[i].model;
            c.planCallId = planCall.value(i);
            c.planSlot = int(qToPlan.indexOf(i));
            c.status = CandidateStatus::Failed;
            c.error = QStringLiteral("no implementation of this plan in %1").arg(codeDir.path());
            if (!add(c))
                return fail(QStringLiteral("%1: cannot store the candidate: %2").arg(plans[i].file, store.lastError()));
        }
        return true;
    }

    bool importRepairs(int n, const QList<Candidate> &failed)
    {
        const QDir fixDir(path(QStringLiteral("reimplemented-code-iter-%1").arg(n)));
        const QDir evalDir(path(QStringLiteral("eval-reimplemented-results-iter-%1").arg(n)));
        struct Fix
        {
            int k = 0;
            QString model;
            int sample = 0;
            QString file;
        };
        QList<Fix> fixes;
        static const QRegularExpression re(QStringLiteral("^reimplement_failed_(\\d+)_(.+)_(\\d+)\\.txt$"));
        QStringList models;
        for (const QString &name : fixDir.entryList(QDir::Files, QDir::Name)) {
            const auto m = re.match(name);
            if (!m.hasMatch())
                continue;
            fixes << Fix{m.captured(1).toInt(), m.captured(2), m.captured(3).toInt(), fixDir.filePath(name)};
            if (!models.contains(m.captured(2)))
                models << m.captured(2);
        }
        models.sort();
        std::stable_sort(fixes.begin(), fixes.end(), [&](const Fix &a, const Fix &b) {
            const auto ma = models.indexOf(a.model), mb = models.indexOf(b.model);
            return std::tie(ma, a.k, a.sample) < std::tie(mb, b.k, b.sample);
        });
        for (int j = 0; j < fixes.size(); ++j) {
            const Fix &f = fixes[j];
            if (f.k >= failed.size())
                return fail(QStringLiteral("%1: failed implementation %2 does not exist: iteration %3 has %4 failed "
                                           "implementations with output")
                                .arg(f.file)
                                .arg(f.k)
                                .arg(n)
                                .arg(failed.size()));
            const Candidate &broken = failed[f.k];
            Candidate c;
            c.parentId = broken.parentId;
            c.iteration = n;
            c.origin = CandidateOrigin::Fix;
            c.fixOf = broken.id;
            c.plan = broken.plan;
            c.planModel = broken.planModel;
            c.planCallId = broken.planCallId;
            c.planSlot = broken.planSlot;
            c.codeModel = f.model;
            c.sample = f.sample;
            bool present = false;
            QJsonObject result;
            const qint64 id = addEvaluated(c, f.file, evalDir, QStringLiteral("code_%1_result.txt").arg(j), &present,
                                           &result);
            if (!id)
                return false;
            const QString base = QStringLiteral("failed_%1_%2").arg(f.k).arg(f.model);
            auto prompt = optionalText(fixDir.filePath(QStringLiteral("reimplement_prompt_%1.txt").arg(base)));
            auto full = optionalText(
                fixDir.filePath(QStringLiteral("reimplement_%1_%2_full.txt").arg(base).arg(f.sample)));
            if (!prompt || !full)
                return false;
            if (!addCall(QStringLiteral("fix"), f.model, *prompt, full->isEmpty() ? c.code : *full, id))
                return fail(QStringLiteral("%1: cannot store the repair call: %2").arg(f.file, store.lastError()));
        }
        return true;
    }

    qint64 run()
    {
        if (!QFileInfo(dir.path()).isDir()) {
            fail(QStringLiteral("%1: not a directory").arg(dir.path()));
            return 0;
        }
        if (!QFileInfo(path(QStringLiteral("candidates-iter-0"))).isDir()) {
            fail(QStringLiteral("%1: not an Autocomp output directory (no candidates-iter-0/)").arg(dir.path()));
            return 0;
        }
        bool hasMetadata = false;
        const auto metadata = readJsonObject(path(QStringLiteral("run_metadata.json")), error, &hasMetadata);
        if (!metadata)
            return 0;
        const auto runMetrics = readJsonObject(path(QStringLiteral("run_metrics.json")), error);
        if (!runMetrics)
            return 0;
        const QJsonObject ours = metadata->value(QStringLiteral("autocomp_workbench")).toObject();
        if (metadata->value(QStringLiteral("metric")).isString())
            metric = metadata->value(QStringLiteral("metric")).toString();
        for (const char *key : {"plan_models", "code_models"})
            for (const QJsonValue &v : metadata->value(QLatin1String(key)).toArray())
                if (v.toString().contains(QStringLiteral("::")))
                    providerOf.insert(fileModel(v.toString()), v.toString().section(QStringLiteral("::"), 0, 0));

        int last = 0;
        static const QRegularExpression iterRe(
            QStringLiteral("^(?:candidates|generated-plans|generated-code|eval-results)-iter-(\\d+)$"));
        for (const QString &name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            const auto m = iterRe.match(name);
            if (m.hasMatch())
                last = std::max(last, m.captured(1).toInt());
        }

        RunInfo info;
        const QString dirName = QFileInfo(QDir::cleanPath(dir.absolutePath())).fileName();
        static const QRegularExpression nameRe(QStringLiteral("^(.+?)_(.+)_(\\d+)_(?:beam|exhaustive)_iters\\d+"));
        const auto nm = nameRe.match(dirName);
        info.target = ours.value(QStringLiteral("target")).toString();
        info.problem = ours.value(QStringLiteral("problem")).toString();
        if (info.target.isEmpty())
            info.target = nm.hasMatch() ? nm.captured(1) : QStringLiteral("autocomp");
        if (info.problem.isEmpty()) {
            const QString p = metadata->value(QStringLiteral("problem")).toString();
            info.problem = !p.isEmpty() ? p
                : nm.hasMatch()         ? nm.captured(2) + QLatin1Char('_') + nm.captured(3)
                                        : dirName;
        }
        info.agent = ours.value(QStringLiteral("agent")).toString();
        info.configYaml = ours.value(QStringLiteral("config_yaml")).toString();
        info.metric = ours.value(QStringLiteral("metric")).toString(metric);
        info.state = RunState::Finished;
        info.label = QStringLiteral("imported from Autocomp output %1").arg(QDir::cleanPath(dir.absolutePath()));
        info.createdAt = QDateTime::currentDateTimeUtc();
        info.iteration = last;
        info.tokensIn = runMetrics->value(QStringLiteral("total_input_tokens")).toInteger();
        info.tokensOut = runMetrics->value(QStringLiteral("total_output_tokens")).toInteger();
        info.usd = ours.value(QStringLiteral("usd")).toDouble();
        for (const QJsonValue &v : ours.value(QStringLiteral("schedule")).toArray())
            info.schedule << v.toString();
        runId = store.createRun(info);
        if (!runId) {
            fail(QStringLiteral("%1: cannot store the run: %2").arg(dir.path(), store.lastError()));
            return 0;
        }
        info.id = runId;
        if (!importAll(last)) {
            store.deleteRun(runId);
            return 0;
        }

        // Steps that changed nothing (the same code as an earlier candidate) say so.
        for (const Candidate &c : flagIdenticalCode(store.candidates(runId)))
            if (!store.updateCandidate(c)) {
                fail(QStringLiteral("%1: cannot store candidate %2: %3")
                         .arg(dir.path())
                         .arg(c.id)
                         .arg(store.lastError()));
                store.deleteRun(runId);
                return 0;
            }
        // Totals and the best.
        const QList<Candidate> all = store.candidates(runId);
        std::optional<Candidate> best;
        for (const Candidate &c : all) {
            if (c.origin == CandidateOrigin::Root && c.hasScore() && info.baselineScore == 0)
                info.baselineScore = c.score;
            if (c.status == CandidateStatus::Correct && c.hasScore() && (!best || c.score < best->score))
                best = c;
        }
        if (best) {
            info.bestScore = best->score;
            info.bestCandidateId = best->id;
        }
        info.llmCalls = llmCalls;
        if (!store.updateRun(info)) {
            fail(QStringLiteral("%1: cannot store the run: %2").arg(dir.path(), store.lastError()));
            store.deleteRun(runId);
            return 0;
        }
        return runId;
    }

    bool importAll(int last)
    {
        QList<std::shared_ptr<ReprNode>> nodes;
        bool present = false;
        if (!readBeam(0, &nodes, &present))
            return false;
        if (nodes.isEmpty())
            return fail(QStringLiteral("%1: no candidate_K.txt").arg(path(QStringLiteral("candidates-iter-0"))));
        QList<qint64> beam;
        for (int k = 0; k < nodes.size(); ++k) {
            const qint64 id = resolve(nodes[k], 0);
            if (!id)
                return fail(
                    QStringLiteral("%1: cannot store the candidate: %2")
                        .arg(path(QStringLiteral("candidates-iter-0/candidate_%1.txt").arg(k)), store.lastError()));
            beam << id;
        }
        // The original code's evaluation, when there is one.
        for (int k = 0; k < beam.size(); ++k) {
            const QString file = path(QStringLiteral("eval-results-iter-0/code_%1_result.txt").arg(k));
            bool has = false;
            const auto result = readJsonObject(file, error, &has);
            if (!result)
                return false;
            if (!has)
                continue;
            for (Candidate &c : created)
                if (c.id == beam[k] && c.origin == CandidateOrigin::Root) {
                    const double keep = c.score;
                    applyResult(c, *result);
                    if (!c.hasScore())
                        c.score = keep;
                    if (!store.updateCandidate(c))
                        return fail(QStringLiteral("%1: cannot store the result: %2").arg(file, store.lastError()));
                }
        }
        for (int n = 1; n <= last; ++n) {
            if (!importIteration(n, beam))
                return false;
            nodes.clear();
            if (!readBeam(n, &nodes, &present))
                return false;
            if (!present || nodes.isEmpty())
                continue; // Autocomp goes on from the last beam it has
            QList<qint64> next;
            for (int k = 0; k < nodes.size(); ++k) {
                const qint64 id = resolve(nodes[k], n);
                if (!id)
                    return fail(QStringLiteral("%1: cannot store the candidate: %2")
                                    .arg(path(QStringLiteral("candidates-iter-%1/candidate_%2.txt").arg(n).arg(k)),
                                         store.lastError()));
                next << id;
            }
            beam = next;
        }
        if (!store.setBeam(runId, beam))
            return fail(QStringLiteral("%1: cannot store the beam: %2").arg(dir.path(), store.lastError()));
        return true;
    }
};

} // namespace

qint64 importAutocompDir(RunStore &store, const QString &dirPath, QString *error)
{
    // One transaction: an import that fails or is killed halfway leaves nothing behind.
    Importer importer(store, dirPath, error);
    if (!store.beginBatch()) {
        store.endBatch(false);
        if (error)
            *error = QStringLiteral("%1: cannot import: %2").arg(dirPath, store.lastError());
        return 0;
    }
    const qint64 runId = importer.run();
    if (!store.endBatch(runId != 0)) {
        if (runId && error)
            *error = QStringLiteral("%1: cannot import: %2; nothing was imported").arg(dirPath, store.lastError());
        return 0;
    }
    return runId;
}

} // namespace autocomp
