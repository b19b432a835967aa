#include "models/menu_model.h"

#include "common/value_format.h"

#include <cmath>

namespace autocomp {

MenuModel::MenuModel(QObject *parent) : QAbstractTableModel(parent) {}

void MenuModel::setItems(const QList<Item> &items)
{
    beginResetModel();
    m_items = items;
    endResetModel();
}

QStringList MenuModel::enabledItems() const
{
    QStringList out;
    for (const Item &item : m_items)
        if (item.enabled)
            out << item.text;
    return out;
}

QStringList MenuModel::disabledItems() const
{
    QStringList out;
    for (const Item &item : m_items)
        if (!item.enabled)
            out << item.text;
    return out;
}

int MenuModel::addItem(const QString &text)
{
    const int row = int(m_items.size());
    insertRows(row, 1);
    m_items[row].text = text;
    const QModelIndex changed = index(row, TextColumn);
    Q_EMIT dataChanged(changed, changed);
    return row;
}

bool MenuModel::moveItem(int row, int delta)
{
    const int target = row + delta;
    if (row < 0 || row >= m_items.size() || target < 0 || target >= m_items.size() || delta == 0)
        return false;
    // moveRows' destination is the row before which the item lands, in the pre-move numbering.
    return moveRows({}, row, 1, {}, delta > 0 ? target + 1 : target);
}

void MenuModel::setRecords(const QHash<QString, StrategyRecord> &records, int runs)
{
    m_records = records;
    m_recordRuns = runs;
    if (!m_items.isEmpty())
        Q_EMIT dataChanged(index(0, RecordColumn), index(int(m_items.size()) - 1, RecordColumn));
}

QString MenuModel::recordText(int row) const
{
    if (row < 0 || row >= m_items.size() || m_recordRuns < 0)
        return {};
    if (m_recordRuns == 0)
        return tr("no runs of this agent yet");
    const auto it = m_records.constFind(m_items.at(row).text);
    if (it == m_records.cend() || (it->offered == 0 && it->chosen == 0))
        return tr("never offered");
    const StrategyRecord &r = *it;
    QString text = tr("offered %1 · chosen %2").arg(r.offered).arg(r.chosen);
    if (r.candidates > 0)
        text += tr(" · %1 of %2 correct · beam %3").arg(r.correct).arg(r.candidates).arg(r.enteredBeam);
    if (!std::isnan(r.bestGain))
        text += tr(" · best %1").arg(ValueFormat::speedup(r.bestGain));
    return text;
}

int MenuModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_items.size()); }

int MenuModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MenuModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Item &item = m_items.at(index.row());
    switch (index.column()) {
    case EnabledColumn:
        if (role == Qt::CheckStateRole)
            return item.enabled ? Qt::Checked : Qt::Unchecked;
        if (role == SortRole)
            return item.enabled;
        if (role == Qt::ToolTipRole)
            return item.enabled ? tr("Offered to the planner") : tr("Kept in the agent but not offered to the planner");
        break;
    case TextColumn:
        if (role == Qt::DisplayRole || role == Qt::EditRole || role == SortRole)
            return item.text;
        if (role == Qt::ToolTipRole)
            return item.text;
        break;
    case RecordColumn:
        if (role == Qt::DisplayRole)
            return recordText(index.row());
        if (role == SortRole) {
            const auto it = m_records.constFind(item.text);
            return it == m_records.cend() ? -1 : it->chosen;
        }
        if (role == Qt::ToolTipRole)
            return tr("In the %n run(s) of this agent in the store", nullptr, std::max(0, m_recordRuns));
        break;
    default: break;
    }
    return {};
}

bool MenuModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return false;
    Item &item = m_items[index.row()];
    if (index.column() == EnabledColumn && role == Qt::CheckStateRole) {
        const bool enabled = value.toInt() == Qt::Checked;
        if (enabled == item.enabled)
            return true;
        item.enabled = enabled;
    } else if (index.column() == TextColumn && role == Qt::EditRole) {
        const QString text = value.toString();
        if (text == item.text)
            return true;
        item.text = text;
    } else {
        return false;
    }
    Q_EMIT dataChanged(index, index, {role, Qt::DisplayRole});
    Q_EMIT edited();
    return true;
}

Qt::ItemFlags MenuModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
    if (index.column() == EnabledColumn)
        f |= Qt::ItemIsUserCheckable;
    else if (index.column() == TextColumn)
        f |= Qt::ItemIsEditable;
    return f;
}

QVariant MenuModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return section + 1;
    switch (section) {
    case EnabledColumn: return tr("On");
    case TextColumn: return tr("Optimization");
    case RecordColumn: return tr("Record in past runs");
    default: return {};
    }
}

bool MenuModel::insertRows(int row, int count, const QModelIndex &parent)
{
    if (parent.isValid() || row < 0 || row > m_items.size() || count < 1)
        return false;
    beginInsertRows(parent, row, row + count - 1);
    for (int i = 0; i < count; ++i)
        m_items.insert(row, Item{});
    endInsertRows();
    Q_EMIT edited();
    return true;
}

bool MenuModel::removeRows(int row, int count, const QModelIndex &parent)
{
    if (parent.isValid() || row < 0 || count < 1 || row + count > m_items.size())
        return false;
    beginRemoveRows(parent, row, row + count - 1);
    m_items.remove(row, count);
    endRemoveRows();
    Q_EMIT edited();
    return true;
}

bool MenuModel::moveRows(const QModelIndex &sourceParent, int sourceRow, int count,
                         const QModelIndex &destinationParent, int destinationChild)
{
    if (sourceParent.isValid() || destinationParent.isValid() || count < 1 || sourceRow < 0
        || sourceRow + count > m_items.size() || destinationChild < 0 || destinationChild > m_items.size()
        || (destinationChild >= sourceRow && destinationChild <= sourceRow + count))
        return false;
    if (!beginMoveRows(sourceParent, sourceRow, sourceRow + count - 1, destinationParent, destinationChild))
        return false;
    const QList<Item> moved = m_items.mid(sourceRow, count);
    m_items.remove(sourceRow, count);
    const int insertAt = destinationChild > sourceRow ? destinationChild - count : destinationChild;
    for (int i = 0; i < count; ++i)
        m_items.insert(insertAt + i, moved.at(i));
    endMoveRows();
    Q_EMIT edited();
    return true;
}

} // namespace autocomp
