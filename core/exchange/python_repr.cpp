#include "exchange/python_repr.h"

#include <cmath>

namespace autocomp {

namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

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

} // namespace

QString pyString(const QString &text) { return QLatin1Char('\'') + pyEscaped(text, true) + QLatin1Char('\''); }
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

bool readPythonLiteral(const QString &text, PyVal *out, QString *error) { return PyReader(text).read(out, error); }

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

} // namespace autocomp
