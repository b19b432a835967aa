#pragma once

#include <QString>
#include <QStringList>

#include <limits>
#include <memory>
#include <vector>

// Python literals both ways, for Autocomp's candidate_K.txt: a Python repr() of a CodeCandidate that Autocomp reads
// back with eval(). Writing: the literals the export needs. Reading: the subset of Python literals such a repr()
// holds (None, True/False, numbers, float('inf'), strings in every quoting, lists, tuples, dicts and calls with
// keyword arguments).

namespace autocomp {

// 'text' with backslashes, quotes and control characters escaped.
QString pyString(const QString &text);
// '''text''': Autocomp writes it with only quotes escaped; backslashes are escaped too, so eval() gives the text
// back exactly.
QString pyTriple(const QString &text);
// A float literal: None for NaN, float('inf') for infinities, and always a decimal point or exponent.
QString pyFloat(double v);

// A parsed literal.
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

// Parses `text` as one Python literal; false with `error` ("line N: what") when it is not one.
bool readPythonLiteral(const QString &text, PyVal *out, QString *error);

// One CodeCandidate from a candidate_K.txt, with its ancestry.
struct ReprNode
{
    std::shared_ptr<ReprNode> parent;
    bool hasPlan = false;
    QString plan;
    QString code;
    double score = std::numeric_limits<double>::quiet_NaN();
    QStringList hwFeedback;
    QString planModel;
    QString codeModel;
    QString stdoutText;
    QString stderrText;
};

// The text of a None, string or number literal; empty for anything else.
QString pyText(const PyVal *v);
// The CodeCandidate(...) call `v` as a node (its parent chain followed); null with `error` when it is not one.
std::shared_ptr<ReprNode> toNode(const PyVal &v, QString *error);

} // namespace autocomp
